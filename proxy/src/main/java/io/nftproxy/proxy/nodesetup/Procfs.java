package io.nftproxy.proxy.nodesetup;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Files under /proc and /sys, read whole. */
public final class Procfs {
    private Procfs() {
    }

    /**
     * The file's text, trimmed. Not {@code Files.readString}: procfs reports a size of 0, and the
     * JDK then reads one byte ("432000" came back as "4").
     */
    public static String read(Path p) throws IOException {
        try (InputStream in = Files.newInputStream(p)) {
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
        }
    }
}
