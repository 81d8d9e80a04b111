package io.nftproxy.proxy.nodesetup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.proxy.config.KubeProxyConfiguration.Conntrack;

/**
 * The conntrack settings kube-proxy makes at start ({@code conntrack.*}): nf_conntrack_max from
 * {@code maxPerCore} × CPUs (at least {@code min}, at most 1,048,576, and never lowered), the hash
 * table a quarter of it, the TCP established and close-wait timeouts, TCP "be liberal", the UDP
 * timeouts. A zero leaves its setting alone; a setting already at its value is not written (so a
 * process that has only CAP_NET_ADMIN, after a privileged {@code --init-only}, writes nothing).
 *
 * <p>The timeouts and "be liberal" belong to a network namespace; nf_conntrack_max and the hash
 * size are the host's, and are set only from the host's namespace.
 */
public final class ConntrackSysctls {
    private static final Logger LOG = LoggerFactory.getLogger(ConntrackSysctls.class);
    /** kube-proxy's cap on a scaled nf_conntrack_max (1.36). */
    static final int MAX_CAP = 1 << 20;
    static final String MAX = "net/netfilter/nf_conntrack_max";
    static final String HASHSIZE = "/sys/module/nf_conntrack/parameters/hashsize";
    static final String ESTABLISHED = "net/netfilter/nf_conntrack_tcp_timeout_established";
    static final String CLOSE_WAIT = "net/netfilter/nf_conntrack_tcp_timeout_close_wait";
    static final String LIBERAL = "net/netfilter/nf_conntrack_tcp_be_liberal";
    static final String UDP = "net/netfilter/nf_conntrack_udp_timeout";
    static final String UDP_STREAM = "net/netfilter/nf_conntrack_udp_timeout_stream";

    private ConntrackSysctls() {
    }

    /** One setting to write: a sysctl (net/...) or a /sys file, its value now and the value wanted. */
    public record Write(String setting, long now, long wanted) {
        @Override
        public String toString() {
            return setting + ": " + now + " -> " + wanted;
        }
    }

    /** kube-proxy's getConntrackMax: 0 (leave it) without maxPerCore; else the scaled value, capped, at least min. */
    public static long conntrackMax(Conntrack c, int cpus) {
        if (c.maxPerCore() <= 0) {
            return 0;
        }
        long scaled = (long) c.maxPerCore() * cpus;
        if (scaled > MAX_CAP) {
            scaled = MAX_CAP;
        }
        return Math.max(scaled, c.min());
    }

    /**
     * What to write, in kube-proxy's order, given the settings now (absent: unreadable). A pure
     * function; {@code hostNamespace} says whether the global settings may be touched.
     */
    public static List<Write> plan(Conntrack c, int cpus, Map<String, Long> now, boolean hostNamespace) {
        List<Write> out = new ArrayList<>();
        long max = conntrackMax(c, cpus);
        if (max > 0 && hostNamespace) {
            Long cur = now.get(MAX);
            if (cur == null || cur < max) { // only raised: a node set higher keeps its value
                out.add(new Write(MAX, cur == null ? -1 : cur, max));
            }
            Long hash = now.get(HASHSIZE);
            if (hash == null || hash < max / 4) {
                out.add(new Write(HASHSIZE, hash == null ? -1 : hash, max / 4));
            }
        }
        seconds(out, now, ESTABLISHED, c.tcpEstablishedTimeout().toSeconds());
        seconds(out, now, CLOSE_WAIT, c.tcpCloseWaitTimeout().toSeconds());
        if (c.tcpBeLiberal()) {
            seconds(out, now, LIBERAL, 1); // it is never written back to 0
        }
        seconds(out, now, UDP, c.udpTimeout().toSeconds());
        seconds(out, now, UDP_STREAM, c.udpStreamTimeout().toSeconds());
        return out;
    }

    private static void seconds(List<Write> out, Map<String, Long> now, String sysctl, long wanted) {
        if (wanted <= 0) {
            return;
        }
        Long cur = now.get(sysctl);
        if (cur == null || cur != wanted) {
            out.add(new Write(sysctl, cur == null ? -1 : cur, wanted));
        }
    }

    /** A setting that could not be written, named with why and what to do. */
    public static final class SetupException extends IOException {
        public SetupException(String message) {
            super(message);
        }
    }

    /**
     * Applies {@code c} in the network namespace this thread is in; {@code procSys} and
     * {@code sys} are /proc/sys and /sys (tests give others). Returns what was written.
     */
    public static List<Write> apply(Conntrack c, Path procSys, Path sys, boolean hostNamespace) throws SetupException {
        Map<String, Long> now = new TreeMap<>();
        for (String s : List.of(MAX, ESTABLISHED, CLOSE_WAIT, LIBERAL, UDP, UDP_STREAM)) {
            read(procSys.resolve(s)).ifPresent(v -> now.put(s, v));
        }
        read(sys.resolve(HASHSIZE.substring("/sys/".length()))).ifPresent(v -> now.put(HASHSIZE, v));
        List<Write> plan = plan(c, Runtime.getRuntime().availableProcessors(), now, hostNamespace);
        if (conntrackMax(c, Runtime.getRuntime().availableProcessors()) > 0 && !hostNamespace) {
            LOG.info("conntrack: nf_conntrack_max and its hash size are the host's: left alone in this network namespace");
        }
        for (Write w : plan) {
            Path file = w.setting().equals(HASHSIZE) ? sys.resolve(HASHSIZE.substring("/sys/".length()))
                    : procSys.resolve(w.setting());
            try {
                Files.writeString(file, Long.toString(w.wanted()));
                LOG.info("conntrack: set {} to {} (was {})", w.setting(), w.wanted(), w.now() < 0 ? "unreadable" : w.now());
            } catch (IOException e) {
                String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
                throw new SetupException("conntrack: cannot set " + w.setting() + " to " + w.wanted() + " (now "
                        + (w.now() < 0 ? "unreadable" : w.now()) + "): " + why + " -- run kube-proxy --init-only with"
                        + " privilege first (deploy/ does, as an init container), or set its conntrack field to 0 to leave it");
            }
        }
        return plan;
    }

    private static Optional<Long> read(Path p) {
        try {
            return Optional.of(Long.parseLong(Procfs.read(p)));
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** Whether this process is in the host's network namespace (the one of PID 1, as far as it can see). */
    public static boolean inHostNamespace() {
        try {
            return Files.readSymbolicLink(Path.of("/proc/self/ns/net")).equals(Files.readSymbolicLink(Path.of("/proc/1/ns/net")));
        } catch (IOException | UnsupportedOperationException e) {
            return false; // cannot tell: leave the host's settings alone
        }
    }
}
