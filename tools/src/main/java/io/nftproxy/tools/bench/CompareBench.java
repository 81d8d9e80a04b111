package io.nftproxy.tools.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;

import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.sandbox.Netns;
import io.nftproxy.sandbox.Sandbox;

/**
 * Backends side by side on the same generated services, each in a fresh network namespace: a
 * full sync, then partial changes (an endpoint replaced, an endpoint added, a service added, and
 * removed again), repeated; and the data plane: new-connection latency from a pod through the
 * node to a service while N services are programmed. Every figure goes to {@link Results}.
 */
public final class CompareBench {
    /** One measured series: kind (sync or connect), backend, size, case, samples (nanos) or a note. */
    public record Row(String kind, String backend, int services, String sample, long[] nanos, String note) {
        public double p(double q) {
            if (nanos.length == 0) {
                return Double.NaN;
            }
            long[] s = nanos.clone();
            Arrays.sort(s);
            return Percentile.ms(s, q);
        }
    }

    /** Scrapes of the service counters timed per size (after a first, untimed one). */
    static final int SCRAPES = 10;

    private final List<String> backends;
    private final int endpoints;
    private final int repetitions;
    private final Duration budget;
    private final List<Row> rows = new ArrayList<>();

    public CompareBench(List<String> backends, int endpoints, int repetitions, Duration budget) {
        this.backends = backends;
        this.endpoints = endpoints;
        this.repetitions = repetitions;
        this.budget = budget;
    }

    public List<Row> rows() {
        return rows;
    }

    /** Runs a command (ip netns add/del, nft) to its end; its output is the error message when it fails. */
    public static void exec(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out.trim());
        }
    }

    /** The state with one change applied; the id of the service port it touched. */
    record Change(String sample, ProxyState state, ServicePortName id) {
    }

    /** The changes of the {@code r}-th repetition, each from the state before it. */
    static List<Change> changes(ProxyState base, int n, int r) {
        return changes(new StateEditor(base), n, r, BenchState.MANY_ENDPOINTS);
    }

    /**
     * The changes of the {@code r}-th repetition, each made in {@code ed} from the state before it;
     * the large services' ({@link BenchState#MANY_EVERY}) with {@code many} endpoints.
     */
    static List<Change> changes(StateEditor ed, int n, int r, int many) {
        List<Change> out = new ArrayList<>();
        ProxyState s = ed.state();
        ServicePortName a = new ServicePortName("bench", "svc-" + ((r * 7919L + 1) % n), "http", Protocol.TCP);
        List<Endpoint> eps = new ArrayList<>(s.endpointsOf(a));
        if (!eps.isEmpty()) {
            eps.set(r % eps.size(), Endpoint.ready(BenchState.ip(0x0b000000 + r), 8080, "node-x"));
        }
        s = ed.set(a, s.services().get(a), eps);
        out.add(new Change("endpoint replaced", s, a));
        ServicePortName b = new ServicePortName("bench", "svc-" + ((r * 104_729L + 13) % n), "http", Protocol.TCP);
        s = withEndpointAdded(ed, b, 0x0c000000 + r, "node-y");
        out.add(new Change("endpoint added", s, b));
        s = withEndpointRemoved(ed, b, r);
        out.add(new Change("endpoint removed", s, b));
        ServicePortName c = new ServicePortName("bench", "added-" + r, "http", Protocol.TCP);
        ServicePort svc = ServicePort.builder(c, 80).clusterIPs(List.of(BenchState.ip(0x0a6f0000 + r + 1))).build();
        List<Endpoint> ceps = new ArrayList<>();
        for (int j = 0; j < 10; j++) {
            ceps.add(Endpoint.ready(BenchState.ip(0x0d000000 + r * 16 + j), 8080, "node-" + j));
        }
        s = ed.set(c, svc, ceps);
        out.add(new Change("service added", s, c));
        s = ed.set(c, null, null);
        out.add(new Change("service removed", s, c));
        // The kinds that have (or had) chains of their own, each on its own: the draws above
        // cross the mix, where they are a fifth of the services. Each: an endpoint added to one
        // of the mix's, one removed from it (an index in the middle: the last endpoint takes it),
        // and a service of the kind added and removed.
        if (n >= BenchState.STICKY_EVERY) {
            ServicePortName d = BenchState.id((int) ((r * 7919L + 5) % (n / BenchState.STICKY_EVERY))
                    * BenchState.STICKY_EVERY + BenchState.STICKY_AT);
            s = kindChanges(out, "sticky service", ed, d, 0x0e000000 + r, r,
                    ServicePort.builder(added("sticky", r), 80).clusterIPs(List.of(BenchState.ip(0x0a6d0000 + r + 1)))
                            .affinitySeconds(10_800).build(), ceps);
        }
        if (n >= BenchState.LOCAL_EVERY) {
            ServicePortName e = BenchState.id((int) ((r * 104_729L + 7) % (n / BenchState.LOCAL_EVERY)) * BenchState.LOCAL_EVERY);
            List<Endpoint> oneHere = new ArrayList<>(ceps);
            oneHere.set(0, Endpoint.ready(oneHere.get(0).address(), 8080, "node-a"));
            // A NodePort (outside the mix's 30000-32767), as the mix's Local services are: a kind
            // in use, whose changes are elements (a kind's first frontend brings its tree:
            // docs/ruleset.md).
            s = kindChanges(out, "Local service", ed, e, 0x0f000000 + r, r,
                    ServicePort.builder(added("local", r), 80).clusterIPs(List.of(BenchState.ip(0x0a6c0000 + r + 1)))
                            .nodePort(29_000 + r % 1000).externalPolicyLocal(true).build(), oneHere);
        }
        if (n > BenchState.MANY_AT) {
            ServicePortName m = BenchState.id((int) ((r * 7919L + 3) % ((n - BenchState.MANY_AT - 1) / BenchState.MANY_EVERY + 1))
                    * BenchState.MANY_EVERY + BenchState.MANY_AT);
            List<Endpoint> manyEps = new ArrayList<>();
            for (int j = 0; j < many; j++) {
                manyEps.add(Endpoint.ready(BenchState.ip(0x11000000 + r * 256 + j), 8080, "node-" + j % 100));
            }
            ServicePort large = ServicePort.builder(added("many", r), 80).clusterIPs(List.of(BenchState.ip(0x0a6b0000 + r + 1)))
                    .build();
            if (many > NftRenderer.MAX_PLAIN_PICK) {
                // The mix's large services are of policy Local (every twentieth), which past 1,024
                // endpoints has chains of its own: the endpoint changes go to the plain one added.
                s = addedKindChanges(out, ">1,024 endpoints", ed, large, manyEps, 0x10000000 + r, r);
            } else {
                s = kindChanges(out, ">128 endpoints", ed, m, 0x10000000 + r, r, large, manyEps);
            }
        }
        ServicePortName f = new ServicePortName("bench", "ranged-" + r, "http", Protocol.TCP);
        ServicePort ranged = ServicePort.builder(f, 80).clusterIPs(List.of(BenchState.ip(0x0a6e0000 + r + 1)))
                // In the shard of the mix's first ranged IP (its last byte): a shard in use, so
                // that the change is elements (a shard's first IP brings its chain).
                .loadBalancerIPs(List.of(BenchState.ip(0x64700000 + (r << 8) + BenchState.RANGES_AT)))
                .loadBalancerSourceRanges(BenchState.SOURCE_RANGES)
                .build();
        s = ed.set(f, ranged, ceps);
        out.add(new Change("service added (source ranges)", s, f));
        s = ed.set(f, null, null);
        out.add(new Change("service removed (source ranges)", s, f));
        return out;
    }

    /**
     * Changes per repetition at most: {@link #changes} makes five on plain services, four per
     * kind with a draw of its own (sticky, Local, more than 128 endpoints), and a ranged service
     * added and removed.
     */
    static final int CHANGES_PER_REPETITION = 19;

    private static ServicePortName added(String kind, int r) {
        return new ServicePortName("bench", "added-" + kind + "-" + r, "http", Protocol.TCP);
    }

    /**
     * The changes of one kind of service: an endpoint added to {@code id} (from the mix), one
     * removed from it, and {@code svc} with {@code eps} added and removed again.
     */
    /** As {@link #kindChanges}, the endpoint changes made to {@code svc} while it is there rather than to one of the mix's. */
    private static ProxyState addedKindChanges(List<Change> out, String kind, StateEditor ed, ServicePort svc, List<Endpoint> eps,
                                               int address, int r) {
        ProxyState s = ed.set(svc.id(), svc, eps);
        out.add(new Change("service added (" + kind + ")", s, svc.id()));
        s = withEndpointAdded(ed, svc.id(), address, "node-z");
        out.add(new Change("endpoint added (" + kind + ")", s, svc.id()));
        s = withEndpointRemoved(ed, svc.id(), r);
        out.add(new Change("endpoint removed (" + kind + ")", s, svc.id()));
        s = ed.set(svc.id(), null, null);
        out.add(new Change("service removed (" + kind + ")", s, svc.id()));
        return s;
    }

    private static ProxyState kindChanges(List<Change> out, String kind, StateEditor ed, ServicePortName id, int address,
                                          int r, ServicePort svc, List<Endpoint> eps) {
        ProxyState s = withEndpointAdded(ed, id, address, "node-z");
        out.add(new Change("endpoint added (" + kind + ")", s, id));
        s = withEndpointRemoved(ed, id, r);
        out.add(new Change("endpoint removed (" + kind + ")", s, id));
        s = ed.set(svc.id(), svc, eps);
        out.add(new Change("service added (" + kind + ")", s, svc.id()));
        s = ed.set(svc.id(), null, null);
        out.add(new Change("service removed (" + kind + ")", s, svc.id()));
        return s;
    }

    /** {@code id} without one of its endpoints, drawn by {@code r} (not the last, unless it is the only one). */
    private static ProxyState withEndpointRemoved(StateEditor ed, ServicePortName id, int r) {
        ProxyState s = ed.state();
        List<Endpoint> eps = new ArrayList<>(s.endpointsOf(id));
        if (!eps.isEmpty()) {
            eps.remove(eps.size() == 1 ? 0 : r % (eps.size() - 1));
        }
        return ed.set(id, s.services().get(id), eps);
    }

    private static ProxyState withEndpointAdded(StateEditor ed, ServicePortName id, int address, String node) {
        ProxyState s = ed.state();
        List<Endpoint> eps = new ArrayList<>(s.endpointsOf(id));
        eps.add(Endpoint.ready(BenchState.ip(address), 8080, node));
        return ed.set(id, s.services().get(id), eps);
    }

    /** Full and partial syncs at each size, for each backend. */
    public void syncs(List<Integer> sizes) throws Exception {
        long steps = (long) sizes.size() * backends.size() * (1 + (long) CHANGES_PER_REPETITION * repetitions);
        try (ProgressBar bar = bar("syncs", steps)) {
            for (int n : sizes) {
                ProxyState base = BenchState.mixed(n, endpoints, manyEndpoints);
                for (String b : backends) {
                    String ns = "nftp-cmp-" + ProcessHandle.current().pid();
                    exec("ip", "netns", "add", ns);
                    try (SyncBackend backend = SyncBackend.create(b, BenchState.config(), ns)) {
                        bar.setExtraMessage(b + " " + n);
                        long full;
                        long slabBefore = KernelMemory.settledSlabKb();
                        try {
                            full = backend.full(base, budget);
                        } catch (SyncBackend.OverBudget e) {
                            rows.add(new Row("sync", b, n, "full", new long[0], "> " + budget.toSeconds() + " s budget"));
                            bar.stepBy(1 + (long) CHANGES_PER_REPETITION * repetitions);
                            continue;
                        }
                        long slabMb = (KernelMemory.slabKb() - slabBefore) / 1024;
                        rows.add(new Row("sync", b, n, "full", new long[] {full}, "kernel slab +" + slabMb + " MB"));
                        bar.step();
                        settle();
                        Map<String, List<Long>> samples = new LinkedHashMap<>();
                        StateEditor editor = new StateEditor(base);
                        Map<String, String> largest = new HashMap<>();
                        Map<String, Long> largestNanos = new HashMap<>();
                        ProxyState before = base;
                        String over = "";
                        changes:
                        for (int r = 0; r < repetitions; r++) {
                            for (Change c : changes(editor, n, r, manyEndpoints)) {
                                try {
                                    long t = backend.change(before, c.state(), c.id(), budget);
                                    samples.computeIfAbsent(c.sample(), k -> new ArrayList<>()).add(t);
                                    SyncBackend.Breakdown bd = backend.lastBreakdown();
                                    if (bd != null && t > largestNanos.getOrDefault(c.sample(), -1L)) {
                                        largestNanos.put(c.sample(), t);
                                        largest.put(c.sample(), describe(t, bd) + " (repetition " + (r + 1) + ")");
                                    }
                                } catch (SyncBackend.OverBudget e) {
                                    over = "> " + budget.toSeconds() + " s budget (" + c.sample() + ")";
                                    bar.stepBy((long) CHANGES_PER_REPETITION * (repetitions - r));
                                    break changes;
                                }
                                before = c.state();
                                bar.step();
                            }
                        }
                        String note = over;
                        samples.forEach((k, v) -> rows.add(new Row("sync", b, n, k, v.stream().mapToLong(Long::longValue).toArray(),
                                String.join("; ", Stream.of(note, largest.get(k)).filter(x -> x != null && !x.isEmpty()).toList()))));
                        scrapes(backend, n, before);
                    } finally {
                        exec("ip", "netns", "del", ns);
                    }
                }
            }
        }
    }

    /**
     * Lets the full sync's data settle before changes are timed, as it has in a daemon that has
     * run for a minute: a full collection moves what the full sync left (at 100k, hundreds of
     * megabytes of held state) into the old generation. Without it, the young collections of
     * the seconds after a full sync still copy that data from one survivor space to the next,
     * 80–220 ms each, and land in timed changes (docs/benchmarks.md).
     */
    static void settle() {
        System.gc();
    }

    /**
     * Where the largest sample of a case went: "largest 41.2 ms: kernel 2.1, render 1.3, rest
     * 37.8; GC pauses 35". The rest is our Java after the commit and whatever stopped it; the
     * JVM's collection pauses during the change are counted apart, as they may fall in any part.
     */
    static String describe(long nanos, SyncBackend.Breakdown bd) {
        double total = nanos / 1e6;
        double kernel = bd.kernelNanos() / 1e6;
        double render = bd.prepareNanos() / 1e6;
        return String.format(Locale.ROOT, "largest %.1f ms: kernel %.1f, render %.1f, rest %.1f; GC pauses %d",
                total, kernel, render, Math.max(0, total - kernel - render), bd.gcPauseMillis());
    }

    /** With a backend that keeps service counters: what a scrape of them costs at this size. */
    private void scrapes(SyncBackend backend, int n, ProxyState synced) throws Exception {
        SyncBackend.Scrape warmUp = backend.scrape(synced); // untimed: the first reads and formats cold
        if (warmUp == null) {
            return;
        }
        long[] nanos = new long[SCRAPES];
        int chars = 0;
        for (int i = 0; i < SCRAPES; i++) {
            SyncBackend.Scrape s = backend.scrape(synced);
            nanos[i] = s.nanos();
            chars = s.chars();
        }
        rows.add(new Row("scrape", backend.name(), n, "scrape", nanos, String.format(Locale.ROOT, "%.1f MB of text", chars / 1e6)));
    }

    /** Whether the data plane's series are sampled with perf for the kernel's time in nft_do_chain. */
    private boolean kernelTime;

    /** Sample the CPUs with perf during each connection series ({@link KernelTime}). */
    public void kernelTime(boolean on) {
        kernelTime = on;
    }

    /** Endpoints of the mix's large services, and of the one each repetition adds ({@code --many-endpoints}). */
    private int manyEndpoints = BenchState.MANY_ENDPOINTS;

    public void manyEndpoints(int n) {
        manyEndpoints = n;
    }

    /** The most endpoints {@link #connectEndpoints} gives the service connected to: addresses of one /16. */
    public static final int MAX_CONNECT_ENDPOINTS = 65_000;

    /** Endpoints of the service the data plane connects to ({@link #connects}). */
    private int connectEndpoints = 1;

    /**
     * Gives the service the data plane connects to {@code n} endpoints: 10.245.0.2 and on, every
     * one answered by one pod, which takes the whole /16 as its own (a local route), so that a
     * service of thousands of endpoints costs one server.
     */
    public void connectEndpoints(int n) {
        connectEndpoints = n;
    }

    /** The endpoints of the service connected to: the pod's one, or {@link #connectEndpoints} addresses of MANY_ADDRESSES. */
    private List<Endpoint> connectedEndpoints() throws IOException {
        if (connectEndpoints == 1) {
            return List.of(Endpoint.ready(InetAddress.getByName("10.244.1.2"), 8080, "node-a"));
        }
        List<Endpoint> out = new ArrayList<>();
        for (int i = 0; i < connectEndpoints; i++) {
            int host = i + 2;
            out.add(Endpoint.ready(InetAddress.getByName("10.245." + (host >> 8) + "." + (host & 0xff)), 8080, "node-a"));
        }
        return out;
    }

    /** Where the addresses of a service of many endpoints are: one pod answers for all of them. */
    private static final String MANY_ADDRESSES = "10.245.0.0/16";

    /**
     * The pod that answers for the many endpoints: 10.245.0.1 with the whole /16 routed to it by
     * the node and taken as local by the pod (AnyIP), one server on 0.0.0.0:8080.
     */
    private static List<AutoCloseable> serveMany(Sandbox box) throws Exception {
        Netns pod = box.pod("10.245.0.1");
        pod.exec("ip", "route", "add", "local", MANY_ADDRESSES, "dev", "lo");
        box.node.exec("ip", "route", "add", MANY_ADDRESSES, "via", "10.245.0.1");
        return Sandbox.answer(pod.ns(), "0.0.0.0", 8080);
    }

    /**
     * New-connection latency: a client pod connects {@code connects} times to a service whose
     * endpoint is a real pod, and as many times to that pod's own address (traffic to no service,
     * which pays for the ruleset all the same), through a node that has {@code n} services
     * programmed by each backend; each series' rate (connections a second, one after another) and,
     * with {@link #kernelTime}, the CPU time per connection in {@code nft_do_chain}.
     */
    public void connects(List<Integer> sizes, int connects) throws Exception {
        try (ProgressBar bar = bar("data plane", (long) sizes.size() * backends.size() * connects * 2)) {
            for (int n : sizes) {
                ProxyState base = BenchState.mixed(n, endpoints, manyEndpoints);
                ServicePortName first = base.sortedServices().get(0).id();
                ServicePort connected = base.services().get(first);
                if (connectEndpoints > 1) {
                    // Plain, whatever the mix made the first service: policy Cluster, no affinity.
                    connected = ServicePort.builder(first, connected.port()).clusterIPs(connected.clusterIPs()).build();
                }
                ProxyState state = new StateEditor(base).set(first, connected, connectedEndpoints());
                InetAddress vip = state.services().get(first).clusterIPs().get(0);
                for (String b : backends) {
                    bar.setExtraMessage(b + " " + n);
                    List<AutoCloseable> many = List.of();
                    try (Sandbox box = new Sandbox("nftp-dp")) {
                        box.serve("10.244.1.2", 8080);
                        if (connectEndpoints > 1) {
                            many = serveMany(box);
                        }
                        var client = box.pod("10.244.2.100");
                        ProxyConfig cfg = BenchState.config();
                        try (SyncBackend backend = SyncBackend.create(b, cfg, box.node.name())) {
                            try {
                                backend.full(state, budget);
                            } catch (SyncBackend.OverBudget e) {
                                rows.add(new Row("connect", b, n, "connect", new long[0], "> " + budget.toSeconds() + " s budget"));
                                bar.stepBy(connects * 2L);
                                continue;
                            }
                            // The kernel frees the tables of the sandbox before asynchronously, which
                            // slows what runs meanwhile: timed once it has, and the sync's data settled.
                            KernelMemory.settledSlabKb();
                            settle();
                            InetSocketAddress pod = new InetSocketAddress(InetAddress.getByName("10.244.1.2"), 8080);
                            for (String kind : List.of("connect", "connect, no service")) {
                                InetSocketAddress to = kind.equals("connect") ? new InetSocketAddress(vip, 80) : pod;
                                long[] lat = new long[connects];
                                long t0 = System.nanoTime();
                                series(client, to, lat, bar);
                                long took = System.nanoTime() - t0;
                                String note = String.format(Locale.ROOT, "%,.0f conn/s", connects / (took / 1e9));
                                if (kernelTime) {
                                    // Apart from the timed series: sampling every CPU slows what it samples.
                                    KernelTime sampling = KernelTime.start();
                                    series(client, to, new long[connects], null);
                                    note += String.format(Locale.ROOT, ", nft_do_chain %.1f µs/conn", sampling.stop() / 1e3 / connects);
                                }
                                rows.add(new Row("connect", b, n, kind, lat, note));
                            }
                        }
                    } finally {
                        for (AutoCloseable server : many) {
                            server.close();
                        }
                    }
                }
            }
        }
    }

    /** One connection after another from one thread in the client's namespace, each one's time in {@code lat}. */
    private static void series(Netns client, InetSocketAddress to, long[] lat, ProgressBar bar) throws Exception {
        client.ns().call(() -> {
            for (int i = 0; i < lat.length; i++) {
                lat[i] = connect(to);
                if (bar != null) {
                    bar.step();
                }
            }
            return null;
        });
    }

    /** Connect to accept: the time until the three-way handshake (through the DNAT, to a service) completes. */
    private static long connect(InetSocketAddress to) throws IOException {
        try (Socket s = new Socket()) {
            s.setSoLinger(true, 0);
            long t0 = System.nanoTime();
            s.connect(to, 3000);
            return System.nanoTime() - t0;
        }
    }

    private static ProgressBar bar(String task, long max) {
        return new ProgressBarBuilder().setTaskName(task).setInitialMax(max).setUpdateIntervalMillis(1000)
                .setConsumer(new ConsoleProgressBarConsumer(System.err)).build();
    }

    /** A number for tables: milliseconds with sensible precision. */
    static String ms(double v) {
        return Double.isNaN(v) ? "" : v < 1 ? String.format(Locale.ROOT, "%.3f", v) : v < 10 ? String.format(Locale.ROOT, "%.2f", v) : String.format(Locale.ROOT, "%.0f", v);
    }
}
