package io.nftproxy.tools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the sandboxing commands need from the machine, checked up front with a way out. */
final class Preflight {
    private static final int CAP_NET_ADMIN = 12;
    private static final int CAP_SYS_ADMIN = 21;

    private Preflight() {
    }

    /** Null when we can build network namespaces, else what to do. */
    static String problem() {
        try {
            long caps = 0;
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("CapEff:")) {
                    caps = Long.parseUnsignedLong(line.substring(7).trim(), 16);
                }
            }
            if ((caps & (1L << CAP_NET_ADMIN)) == 0 || (caps & (1L << CAP_SYS_ADMIN)) == 0) {
                return "needs CAP_NET_ADMIN and CAP_SYS_ADMIN to build network namespaces: run as root (sudo)";
            }
        } catch (IOException e) {
            return "cannot read /proc/self/status (" + e.getMessage() + "): is this Linux?";
        }
        for (String dir : new String[] {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) {
            if (Files.isExecutable(Path.of(dir, "ip"))) {
                return null;
            }
        }
        return "the 'ip' command is missing: install iproute2 (apt-get install iproute2)";
    }
}
