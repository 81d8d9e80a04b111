package io.nftproxy.tools.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The CPU time the kernel spends in {@code nft_do_chain} (and what it calls: set lookups, the
 * NAT expressions) while a series of connections runs: {@code perf record} samples every CPU
 * with the {@code cpu-clock} software event at {@value #HZ} Hz, and the samples whose kernel
 * stack holds {@code nft_do_chain} are counted. A sample stands for 1/{@value #HZ} s of one CPU.
 * The cycle counter would be the finer measure, but the VMs of docs/benchmarks.md have none
 * ({@code perf stat -e cycles}: not supported); the clock's samples give the same share of time.
 */
final class KernelTime {
    static final int HZ = 4_000;

    private final Process perf;
    private final Path data;

    private KernelTime(Process perf, Path data) {
        this.perf = perf;
        this.data = data;
    }

    /** Starts sampling every CPU (root; {@code perf} from Debian's linux-perf). */
    static KernelTime start() throws IOException, InterruptedException {
        Path data = Files.createTempFile("nftproxy-perf", ".data");
        Process p = new ProcessBuilder("perf", "record", "-q", "-e", "cpu-clock", "-F", Integer.toString(HZ), "-a", "-g",
                "-o", data.toString()).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        // perf opens its events before it samples: give it the moment it takes, then check it lives.
        if (p.waitFor(300, TimeUnit.MILLISECONDS)) {
            Files.deleteIfExists(data);
            throw new IOException("perf record ended at once (exit " + p.exitValue() + "): is linux-perf installed,"
                    + " and do we run as root?");
        }
        return new KernelTime(p, data);
    }

    /** Stops sampling: the nanoseconds of CPU time sampled inside {@code nft_do_chain}. */
    long stop() throws IOException, InterruptedException {
        try {
            perf.destroy(); // SIGTERM: perf writes its data and ends
            if (!perf.waitFor(30, TimeUnit.SECONDS)) {
                perf.destroyForcibly();
                throw new IOException("perf record did not end");
            }
            Process script = new ProcessBuilder("perf", "script", "-i", data.toString(), "-F", "ip,sym")
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String out = new String(script.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            script.waitFor();
            return inChain(out.lines().toList()) * 1_000_000_000L / HZ;
        } finally {
            Files.deleteIfExists(data);
        }
    }

    /**
     * How many samples of {@code perf script -F ip,sym}'s output (one stack per sample, a frame
     * "address symbol" a line, samples apart by blank lines) have {@code nft_do_chain} on their stack.
     */
    static long inChain(List<String> lines) {
        long samples = 0;
        boolean counted = false;
        for (String line : lines) {
            if (line.isBlank()) {
                counted = false;
                continue;
            }
            String[] frame = line.trim().split("\\s+");
            if (!counted && frame.length >= 2 && frame[1].equals("nft_do_chain")) {
                samples++;
                counted = true;
            }
        }
        return samples;
    }
}
