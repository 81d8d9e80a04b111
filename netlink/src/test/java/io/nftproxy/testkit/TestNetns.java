package io.nftproxy.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.nftproxy.ffi.NetNamespace;

/**
 * A throwaway network namespace for a kernel test ({@code ip netns add}), made only after the
 * skip/fail rule allows it, deleted on close. Commands run inside it with {@code ip netns exec}.
 */
public final class TestNetns implements AutoCloseable {
    private final String name;

    private TestNetns(String name) {
        this.name = name;
    }

    /** Creates a fresh namespace with its loopback up; skips or fails per {@link Kernel#require()} when that is impossible. */
    public static TestNetns create(String prefix) {
        Kernel.require();
        String name = prefix + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffL);
        run(List.of("ip", "netns", "add", name), null);
        TestNetns ns = new TestNetns(name);
        ns.exec("ip", "link", "set", "lo", "up");
        return ns;
    }

    public String name() {
        return name;
    }

    public NetNamespace ns() {
        return NetNamespace.named(name);
    }

    /** Runs a command inside the namespace; returns stdout; fails with stderr on non-zero exit. */
    public String exec(String... cmd) {
        return execInput(null, cmd);
    }

    public String execInput(String stdin, String... cmd) {
        List<String> inside = new ArrayList<>(List.of("ip", "netns", "exec", name));
        inside.addAll(List.of(cmd));
        return run(inside, stdin);
    }

    /** Loads an nft script into the namespace with {@code nft -f -}. */
    public String nft(String script) {
        return execInput(script, "nft", "-f", "-");
    }

    /** The independent witness: {@code nft -j list ruleset}, parsed. */
    @SuppressWarnings("unchecked")
    public List<Object> nftJson() {
        Object root = Json.parse(exec("nft", "-j", "list", "ruleset"));
        return (List<Object>) ((Map<String, Object>) root).get("nftables");
    }

    /** Runs a command to its end (at most two minutes): its stdout, or an error carrying its stderr. */
    public static String run(List<String> cmd, String stdin) {
        String what = String.join(" ", cmd);
        Path stderr = null;
        try {
            stderr = Files.createTempFile("testnetns", ".err");
            Process p = new ProcessBuilder(cmd).redirectError(stderr.toFile()).start();
            try (var in = p.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            // A command that hangs is killed, which ends the read below.
            CompletableFuture<Void> deadline = CompletableFuture.runAsync(p::destroyForcibly,
                    CompletableFuture.delayedExecutor(2, TimeUnit.MINUTES));
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            if (!deadline.cancel(false)) {
                throw new IllegalStateException(what + ": killed, still running after two minutes");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(what + ": exit " + p.exitValue() + ": " + Files.readString(stderr).trim());
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException(what + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(what + ": interrupted", e);
        } finally {
            if (stderr != null) {
                stderr.toFile().delete();
            }
        }
    }

    @Override
    public void close() {
        try {
            run(List.of("ip", "netns", "del", name), null);
        } catch (IllegalStateException gone) {
            // deleted already (a test that removed it on purpose)
        }
    }
}
