package io.nftproxy.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The skip rule for kernel tests: without CAP_NET_ADMIN (or without the ip and nft tools) they
 * skip with the reason, unless CI=true or NFTPROXY_REQUIRE_KERNEL=1, where a skip is a failure.
 */
public final class Kernel {
    private static final int CAP_NET_ADMIN = 12;
    private static final int CAP_SYS_ADMIN = 21;
    private static String missing;
    private static boolean checked;

    private Kernel() {
    }

    public static boolean required() {
        return "true".equalsIgnoreCase(System.getenv("CI")) || "1".equals(System.getenv("NFTPROXY_REQUIRE_KERNEL"));
    }

    /** Call first in every kernel test. */
    public static void require() {
        String why = whyUnavailable();
        if (why == null) {
            return;
        }
        if (required()) {
            Assertions.fail("kernel test cannot run: " + why + " (CI=true or NFTPROXY_REQUIRE_KERNEL=1 forbids skipping)");
        }
        Assumptions.abort("kernel test skipped: " + why);
    }

    private static synchronized String whyUnavailable() {
        if (checked) {
            return missing;
        }
        checked = true;
        try {
            long caps = 0;
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("CapEff:")) {
                    caps = Long.parseUnsignedLong(line.substring(7).trim(), 16);
                }
            }
            if ((caps & (1L << CAP_NET_ADMIN)) == 0) {
                return missing = "no CAP_NET_ADMIN (run as root)";
            }
            if ((caps & (1L << CAP_SYS_ADMIN)) == 0) {
                return missing = "no CAP_SYS_ADMIN to create network namespaces";
            }
        } catch (IOException e) {
            return missing = "cannot read /proc/self/status: " + e.getMessage();
        }
        for (String tool : new String[] {"ip", "nft"}) {
            if (!onPath(tool)) {
                return missing = "'" + tool + "' is not installed (apt-get install iproute2 nftables)";
            }
        }
        return missing = null;
    }

    public static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return Files.isExecutable(Path.of("/usr/sbin", tool)) || Files.isExecutable(Path.of("/sbin", tool));
    }
}
