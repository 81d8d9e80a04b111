package io.nftproxy.sandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.nftproxy.ffi.NetNamespace;

/** A network namespace made with {@code ip netns add} (sandboxes, tests, benchmarks); deleted on close. */
public final class Netns implements AutoCloseable {
    private final String name;

    private Netns(String name) {
        this.name = name;
    }

    public static Netns create(String prefix) {
        String name = prefix + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffL);
        run(List.of("ip", "netns", "add", name), null);
        Netns ns = new Netns(name);
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

    public static String run(List<String> cmd, String stdin) {
        try {
            Path out = Files.createTempFile("nftproxy-out", ".txt");
            Path err = Files.createTempFile("nftproxy-err", ".txt");
            try {
                Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
                if (stdin != null) {
                    p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
                }
                p.getOutputStream().close();
                if (!p.waitFor(300, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new IllegalStateException(String.join(" ", cmd) + " timed out");
                }
                if (p.exitValue() != 0) {
                    throw new IllegalStateException(String.join(" ", cmd) + " exited " + p.exitValue() + ": "
                            + Files.readString(err).trim());
                }
                return Files.readString(out);
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new IllegalStateException("running " + String.join(" ", cmd) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + String.join(" ", cmd), e);
        }
    }

    @Override
    public void close() {
        try {
            run(List.of("ip", "netns", "del", name), null);
        } catch (IllegalStateException ignored) {
            // already gone
        }
    }
}
