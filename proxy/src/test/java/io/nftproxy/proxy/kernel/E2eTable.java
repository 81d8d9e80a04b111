package io.nftproxy.proxy.kernel;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * The conformance table across nodes: each ported Kubernetes e2e test ({@link E2e}) and what it
 * came to under each backend (the test's display name, "nftables" or "iptables"). Written to
 * target/conformance-nodes.txt after each test class, the union of what ran so far in this JVM;
 * .ci/run prints it beside the single-node table.
 */
final class E2eTable implements TestWatcher, AfterAllCallback {
    /** e2e test → backend → "ok" / "FAILED" / "skipped"; a test several methods check fails if any of them fails. */
    private static final Map<String, Map<String, String>> RESULTS = new TreeMap<>();

    @Override
    public void testSuccessful(ExtensionContext ctx) {
        record(ctx, "ok");
    }

    @Override
    public void testFailed(ExtensionContext ctx, Throwable cause) {
        record(ctx, "FAILED");
    }

    @Override
    public void testAborted(ExtensionContext ctx, Throwable cause) {
        record(ctx, "skipped");
    }

    @Override
    public void testDisabled(ExtensionContext ctx, Optional<String> reason) {
        record(ctx, "skipped");
    }

    private static void record(ExtensionContext ctx, String result) {
        E2e e2e = ctx.getTestMethod().map(m -> m.getAnnotation(E2e.class)).orElse(null);
        if (e2e == null) {
            return;
        }
        String backend = ctx.getDisplayName();
        synchronized (RESULTS) {
            for (String test : e2e.value()) {
                RESULTS.computeIfAbsent(test, t -> new TreeMap<>()).merge(backend, result,
                        (was, now) -> was.equals("FAILED") || now.equals("FAILED") ? "FAILED" : now);
            }
        }
    }

    @Override
    public void afterAll(ExtensionContext ctx) throws IOException {
        Files.writeString(Path.of("target", "conformance-nodes.txt"), table());
    }

    static String table() {
        StringBuilder t = new StringBuilder("Across three nodes: Kubernetes e2e network tests ported (CrossNode*KernelTest)\n");
        int width;
        synchronized (RESULTS) {
            width = RESULTS.keySet().stream().mapToInt(String::length).max().orElse(20);
        }
        t.append(String.format("%-" + width + "s %-9s %s%n", "e2e test (test/e2e/network)", "nftables", "iptables"));
        int[] ok = new int[2];
        synchronized (RESULTS) {
            RESULTS.forEach((test, by) -> {
                String n = by.getOrDefault("nftables", "-");
                String i = by.getOrDefault("iptables", "-");
                ok[0] += n.equals("ok") ? 1 : 0;
                ok[1] += i.equals("ok") ? 1 : 0;
                t.append(String.format("%-" + width + "s %-9s %s%n", test, n, i));
            });
            t.append(String.format("%-" + width + "s %-9s %s%n", RESULTS.size() + " e2e tests", ok[0] + " ok", ok[1] + " ok"));
        }
        return t.toString();
    }
}
