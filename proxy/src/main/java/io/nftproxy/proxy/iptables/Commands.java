package io.nftproxy.proxy.iptables;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs iptables-restore, iptables-save and iptables as the reference backend needs them. */
final class Commands {
    /** iptables-restore of a large ruleset can take long (seconds per thousand services). */
    private static final long TIMEOUT_SECONDS = 300;

    private Commands() {
    }

    /** Runs {@code cmd} with {@code stdin} (may be null): its stdout, or an IllegalStateException carrying its stderr. */
    static String run(List<String> cmd, String stdin) {
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
