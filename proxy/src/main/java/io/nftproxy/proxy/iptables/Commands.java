package io.nftproxy.proxy.iptables;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs iptables-restore, iptables-save and iptables as the reference backend and the leftover cleanup need them. */
public final class Commands {
    /** iptables-restore of a large ruleset can take long (seconds per thousand services). */
    private static final long TIMEOUT_SECONDS = 300;

    private Commands() {
    }

    /** Runs {@code cmd} with {@code stdin} (may be null): its stdout, or an IllegalStateException carrying its stderr. */
    public static String run(List<String> cmd, String stdin) {
        String what = String.join(" ", cmd);
        try {
            Process p = new ProcessBuilder(cmd).start();
            // Both streams drained at once: a command that fills one pipe while we wait on the other never ends.
            CompletableFuture<String> out = drain(p.getInputStream());
            CompletableFuture<String> err = drain(p.getErrorStream());
            try (var in = p.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(what + " timed out after " + TIMEOUT_SECONDS + " s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(what + " exited " + p.exitValue() + ": " + err.join().trim());
            }
            return out.join();
        } catch (IOException e) {
            throw new IllegalStateException("running " + what + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + what, e);
        }
    }

    /** Whether {@code tool} is an executable on PATH (or in /usr/sbin, /sbin, where iptables lives). */
    public static boolean onPath(String tool) {
        String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        for (String dir : (path + ":/usr/sbin:/sbin").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return false;
    }

    /** {@code cmd}, run in the named network namespace (null: ours) through {@code ip netns exec}. */
    public static List<String> in(String netns, List<String> cmd) {
        if (netns == null) {
            return cmd;
        }
        List<String> out = new ArrayList<>(List.of("ip", "netns", "exec", netns));
        out.addAll(cmd);
        return out;
    }

    private static CompletableFuture<String> drain(InputStream in) {
        return CompletableFuture.supplyAsync(() -> {
            try (in) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "";
            }
        });
    }
}
