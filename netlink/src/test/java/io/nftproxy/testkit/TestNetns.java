package io.nftproxy.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.nftproxy.ffi.NetNamespace;

/**
 * A throwaway network namespace for a kernel test ({@code ip netns add}), made only after the
 * skip/fail rule allows it, deleted on close. Commands run inside it with {@code ip netns exec}.
 */
public record TestNetns(String name) implements AutoCloseable {
    /** Creates a fresh namespace with its loopback up; skips or fails per {@link Kernel#require()} when that is impossible. */
    public static TestNetns create(String prefix) {
        Kernel.require();
        TestNetns ns = new TestNetns(prefix + "-" + UUID.randomUUID().toString().substring(0, 8));
        run(List.of("ip", "netns", "add", ns.name), null);
        ns.exec("ip", "link", "set", "lo", "up");
        return ns;
    }

    public NetNamespace ns() {
        return NetNamespace.named(name);
    }

    /** Runs a command inside the namespace: its stdout, or an error with its stderr. */
    public String exec(String... cmd) {
        return run(inside(cmd), null);
    }

    public String execInput(String stdin, String... cmd) {
        return run(inside(cmd), stdin);
    }

    private List<String> inside(String... cmd) {
        return Stream.concat(Stream.of("ip", "netns", "exec", name), Arrays.stream(cmd)).toList();
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
