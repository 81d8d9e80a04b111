package io.nftproxy.tools.bench;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.common.TextFormat;

import io.nftproxy.proxy.render.CountedSets;
import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.counters.ServiceCounters;
import io.nftproxy.proxy.iptables.IptablesRenderer;
import io.nftproxy.proxy.iptables.IptablesSyncer;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;

/**
 * One way of programming the benchmark's services into a network namespace: a full sync, then
 * partial syncs. Each call returns the time it took; a call over its budget is stopped and
 * reported as {@link OverBudget}.
 */
public interface SyncBackend extends AutoCloseable {
    String name();

    long full(ProxyState s, Duration budget) throws Exception;

    long change(ProxyState before, ProxyState after, ServicePortName changed, Duration budget) throws Exception;

    /** One timed scrape of the service counters: nanoseconds, and characters of exposition text. */
    record Scrape(long nanos, int chars) {
    }

    /**
     * Where the last change's time went, for a backend that can tell: inside the kernel (the
     * commit's system calls), rendering and preparing the transaction, and the JVM's garbage
     * collection pauses meanwhile (whole milliseconds, as the JVM counts them).
     */
    record Breakdown(long kernelNanos, long prepareNanos, long gcPauseMillis) {
    }

    /** The breakdown of the last change, or null when this backend cannot tell. */
    default Breakdown lastBreakdown() {
        return null;
    }

    /**
     * The JVM's stop-the-world collectors (G1's concurrent cycle runs beside the application),
     * looked up once: each lookup builds their names anew, garbage in a timed loop.
     */
    final class Collectors {
        static final List<GarbageCollectorMXBean> PAUSING = ManagementFactory.getGarbageCollectorMXBeans().stream()
                .filter(gc -> !gc.getName().contains("Concurrent")).toList();

        private Collectors() {
        }
    }

    /** Milliseconds the JVM's collectors have paused the application so far (their stop-the-world collections). */
    static long gcPauseMillis() {
        long sum = 0;
        for (GarbageCollectorMXBean gc : Collectors.PAUSING) {
            sum += Math.max(0, gc.getCollectionTime());
        }
        return sum;
    }

    /** A scrape of the service counters, when this backend keeps them; null otherwise. */
    default Scrape scrape(ProxyState synced) throws IOException {
        return null;
    }

    @Override
    default void close() {
    }

    /** A sync that did not finish within its budget. */
    final class OverBudget extends Exception {
        public OverBudget(String what, Duration budget) {
            super(what + " exceeded its budget of " + budget.toSeconds() + " s", null, false, false);
        }
    }

    static SyncBackend create(String name, ProxyConfig cfg, String netns) throws Exception {
        return switch (name) {
            case "nftproxy" -> new Nftproxy("nftproxy", cfg, netns);
            case "nftproxy+counters" -> new Nftproxy("nftproxy+counters", cfg.withServiceCounters(true), netns);
            case "nftproxy+endpoint-counters" -> new Nftproxy("nftproxy+endpoint-counters", cfg.withEndpointCounters(true), netns);
            case "nftproxy-uncommented" -> new Nftproxy("nftproxy-uncommented", cfg, netns, false);
            case "kube-nftables" -> new KubeNftables(netns);
            case "kube-iptables" -> new KubeIptables(cfg, netns);
            default -> throw new IllegalArgumentException("unknown backend '" + name
                    + "' (expected nftproxy, nftproxy+counters, nftproxy+endpoint-counters, nftproxy-uncommented, kube-nftables or kube-iptables)");
        };
    }

    /** Runs a command with stdin in the namespace; its wall time, or OverBudget (it is killed then). */
    static long run(String netns, List<String> cmd, String stdin, Duration budget) throws Exception {
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", netns));
        full.addAll(cmd);
        Path log = Files.createTempFile("nftproxy-bench", ".out");
        try {
            long t0 = System.nanoTime();
            // Output to a file: reading a pipe here would wait for the process, whatever the budget.
            Process p = new ProcessBuilder(full).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            // Fed from another thread: the process reads its input as it works, so a write here
            // would block for as long as it runs, whatever the budget.
            Thread feeder = new Thread(() -> {
                try (var in = p.getOutputStream()) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                } catch (IOException e) {
                    // it ended (or was stopped) before reading everything: its exit status says why
                }
            }, "bench-stdin");
            feeder.setDaemon(true);
            feeder.start();
            if (!p.waitFor(budget.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor();
                throw new OverBudget(String.join(" ", cmd), budget);
            }
            long took = System.nanoTime() - t0;
            if (p.exitValue() != 0) {
                String out = Files.readString(log);
                throw new IOException(String.join(" ", cmd) + " failed: " + out.substring(0, Math.min(out.length(), 2000)).trim());
            }
            return took;
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /**
     * nftproxy: one netlink transaction per sync, partial syncs of the changed service only; with
     * --service-counters ("nftproxy+counters") or --endpoint-counters ("nftproxy+endpoint-counters")
     * its scrapes are timed too.
     */
    final class Nftproxy implements SyncBackend {
        private final String name;
        private final NftClient client;
        private final Syncer syncer;
        private final ServiceCounters counters;
        private Breakdown last;

        Nftproxy(String name, ProxyConfig cfg, String netns) throws Exception {
            this(name, cfg, netns, true);
        }

        /** Without element comments ("nftproxy-uncommented"): what naming every element costs, side by side. */
        Nftproxy(String name, ProxyConfig cfg, String netns, boolean elementComments) throws Exception {
            this.name = name;
            client = NftClient.open(NetNamespace.named(netns));
            syncer = new Syncer(client, new NftRenderer(cfg, elementComments), cfg.table());
            counters = cfg.serviceCounters() ? new ServiceCounters(client, cfg.table(), CountedSets.countedSets(cfg),
                    ServiceCounters.HeldElements.of(syncer)) : null;
        }

        @Override
        public String name() {
            return name;
        }

        /** What a Prometheus scrape of the service counters costs: its time, and the bytes of text it returns. */
        @Override
        public Scrape scrape(ProxyState synced) throws IOException {
            if (counters == null) {
                return null;
            }
            counters.attributeWith(synced);
            CollectorRegistry registry = new CollectorRegistry();
            counters.register(registry);
            long t0 = System.nanoTime();
            StringWriter text = new StringWriter(1 << 20);
            TextFormat.write004(text, registry.metricFamilySamples());
            return new Scrape(System.nanoTime() - t0, text.getBuffer().length());
        }

        @Override
        public long full(ProxyState s, Duration budget) throws Exception {
            long t0 = System.nanoTime();
            syncer.sync(s, null);
            return System.nanoTime() - t0;
        }

        @Override
        public long change(ProxyState before, ProxyState after, ServicePortName changed, Duration budget) throws Exception {
            long gc0 = SyncBackend.gcPauseMillis();
            long t0 = System.nanoTime();
            SyncResult r = syncer.sync(after, Set.of(changed));
            long took = System.nanoTime() - t0;
            last = new Breakdown(r.commit().kernelNanos(), r.renderNanos(), SyncBackend.gcPauseMillis() - gc0);
            return took;
        }

        @Override
        public Breakdown lastBreakdown() {
            return last;
        }

        @Override
        public void close() {
            client.close();
        }
    }

    /** kube-proxy's nftables layout through {@code nft -f}: the time of the nft process. */
    final class KubeNftables implements SyncBackend {
        private final String netns;
        private KubeProxyNftLayout.Layout last;

        KubeNftables(String netns) {
            this.netns = netns;
        }

        @Override
        public String name() {
            return "kube-nftables";
        }

        @Override
        public long full(ProxyState s, Duration budget) throws Exception {
            last = KubeProxyNftLayout.of(s);
            return run(netns, List.of("nft", "-f", "-"), KubeProxyNftLayout.full(last), budget);
        }

        @Override
        public long change(ProxyState before, ProxyState after, ServicePortName changed, Duration budget) throws Exception {
            KubeProxyNftLayout.Layout next = KubeProxyNftLayout.of(after);
            long t = run(netns, List.of("nft", "-f", "-"), KubeProxyNftLayout.delta(last, next), budget);
            last = next;
            return t;
        }
    }

    /** kube-proxy's iptables layout (our reference renderer) through {@code iptables-restore --noflush}. */
    final class KubeIptables implements SyncBackend {
        private final String netns;
        private final ProxyConfig cfg;
        private final IptablesRenderer renderer;
        private String last;

        KubeIptables(ProxyConfig cfg, String netns) {
            this.netns = netns;
            this.cfg = cfg;
            this.renderer = new IptablesRenderer(cfg);
        }

        @Override
        public String name() {
            return "kube-iptables";
        }

        @Override
        public long full(ProxyState s, Duration budget) throws Exception {
            // Untimed: our chains and the jumps from the built-in chains, as kube-proxy sets them up
            // once; then the timed restore of the whole ruleset, as its full sync does.
            new IptablesSyncer(cfg, netns).sync(new ProxyState(new TreeMap<>(), Map.of(), s.node()), null);
            last = renderer.render(s, IpFamily.V4).restore();
            return run(netns, List.of("iptables-restore", "-w", "--noflush"), last, budget);
        }

        @Override
        public long change(ProxyState before, ProxyState after, ServicePortName changed, Duration budget) throws Exception {
            String next = renderer.render(after, IpFamily.V4).restore();
            long t = run(netns, List.of("iptables-restore", "-w", "--noflush"), IptablesLayout.delta(last, next), budget);
            last = next;
            return t;
        }
    }
}
