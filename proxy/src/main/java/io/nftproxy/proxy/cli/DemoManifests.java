package io.nftproxy.proxy.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;

/**
 * The demo's cluster as manifests (a node, web, shop, cart, and a service without endpoints),
 * shipped in the product jar: {@code selftest} runs the whole path on them (and records the
 * start-up archive with them), the demo programs them into its sandbox.
 */
public final class DemoManifests {
    private DemoManifests() {
    }

    /** A new temporary directory holding the demo's manifests; delete it with {@link #deleteTree}. */
    public static Path examples() throws IOException {
        Path dir = Files.createTempDirectory("nftproxy-demo");
        try (InputStream in = DemoManifests.class.getResourceAsStream("/io/nftproxy/demo/services.yaml")) {
            if (in == null) {
                throw new IOException("the demo manifests are missing from the jar");
            }
            Files.writeString(dir.resolve("services.yaml"), new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
        return dir;
    }

    public static void deleteTree(Path dir) throws IOException {
        try (var s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
