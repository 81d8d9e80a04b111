package io.nftproxy.tools.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The kernel's slab memory (/proc/meminfo "Slab:"), where nf_tables keeps rules, sets and
 * elements: read around a full sync, it tells what a layout costs the kernel. A namespace or
 * table deleted just before is freed asynchronously, so the reading before a sync waits for the
 * figure to settle.
 */
public final class KernelMemory {
    private KernelMemory() {
    }

    public static long slabKb() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (l.startsWith("Slab:")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return 0;
    }

    /** The slab figure once two readings half a second apart differ by under 1 MB (at most 30 s). */
    public static long settledSlabKb() throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        long last = slabKb();
        while (System.nanoTime() < deadline) {
            Thread.sleep(500);
            long now = slabKb();
            if (Math.abs(now - last) < 1024) {
                return now;
            }
            last = now;
        }
        return last;
    }
}
