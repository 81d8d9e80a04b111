package io.nftproxy.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.nftproxy.ffi.NetNamespace;

/** A throwaway network namespace ({@code ip netns add}), deleted on close. */
public final class TestNetns implements AutoCloseable {
    private final String name;

    private TestNetns(String name) {
        this.name = name;
    }

    /** Creates a fresh namespace; skips or fails per {@link Kernel#require()} when that is impossible. */
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
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", name));
        full.addAll(List.of(cmd));
        return run(full, stdin);
    }

    /** Loads an nft script into the namespace with {@code nft -f -}. */
    public String nft(String script) {
        return execInput(script, "nft", "-f", "-");
    }

    /** The independent witness: {@code nft -j list ruleset}, parsed. */
    @SuppressWarnings("unchecked")
    public List<Object> nftJson() {
        Object root = Json.parse(exec("nft", "-j", "list", "ruleset"));
        return (List<Object>) ((java.util.Map<String, Object>) root).get("nftables");
    }

    public static String run(List<String> cmd, String stdin) {
        Result r = runResult(cmd, stdin);
        if (r.exit() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + " exited " + r.exit() + ": " + r.stderr()
                    + (r.stdout().isEmpty() ? "" : "\nstdout: " + r.stdout()));
        }
        return r.stdout();
    }

    public record Result(int exit, String stdout, String stderr) {
    }

    public static Result runResult(List<String> cmd, String stdin) {
        try {
            Path out = Files.createTempFile("nftp-out", ".txt");
            Path err = Files.createTempFile("nftp-err", ".txt");
            try {
                ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
                Process p = pb.start();
                if (stdin != null) {
                    p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
                }
                p.getOutputStream().close();
                if (!p.waitFor(300, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new IllegalStateException(String.join(" ", cmd) + " timed out");
                }
                return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new IllegalStateException("running " + cmd + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + cmd, e);
        }
    }

    @Override
    public void close() {
        runResult(List.of("ip", "netns", "del", name), null);
    }
}
