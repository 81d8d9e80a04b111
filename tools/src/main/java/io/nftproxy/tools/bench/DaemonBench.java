package io.nftproxy.tools.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;

import io.nftproxy.proxy.render.TableNames;
import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.Generation;
import io.nftproxy.proxy.server.ProxyServer;
import io.nftproxy.proxy.source.KubernetesSource;
import io.nftproxy.proxy.source.ManifestSource;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.proxy.sync.SyncLoop;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;
import io.nftproxy.sandbox.PagingApiDispatcher;

/**
 * The daemon's whole path, measured: a source (a watched directory of one file per service, or
 * informers on fabric8's mock API server in this JVM) feeding the store, the sync loop with no
 * minimum period, and the syncer committing into a network namespace. Times the start (source
 * started to first full sync committed) and each change (file replaced or EndpointSlice updated,
 * to the kernel's ack of the commit that carried it), and reports the heap it holds.
 */
public final class DaemonBench {
    private static final Duration DEADLINE = Duration.ofMinutes(2);
    private static final Logger MOCK_LOG = Logger.getLogger("io.fabric8.mockwebserver");

    private DaemonBench() {
    }

    /** Start time, sorted change latencies, live heap held by the daemon, process RSS, files read. */
    public record Figures(long startNanos, long[] latencies, long[] apiLatencies, long heapBytes, long rssBytes,
                          long filesRead) {
        public double p(double q) {
            return p(latencies, q);
        }

        /** Of the API's own answer to the update (the mock server's part of each change). */
        public double apiP(double q) {
            return p(apiLatencies, q);
        }

        private static double p(long[] sorted, double q) {
            return Percentile.ms(sorted, q);
        }
    }

    private record Committed(long nanos, boolean full, Set<ServicePortName> changed) {
    }

    /** Store, syncer and loop over one namespace; commits are queued with their time. */
    private static final class Daemon implements AutoCloseable {
        final ObjectStore store = new ObjectStore("node-a");
        final LinkedBlockingQueue<Committed> commits = new LinkedBlockingQueue<>();
        final NftClient client;
        final SyncLoop loop;

        Daemon(ProxyConfig cfg, String netns) throws Exception {
            client = NftClient.open(NetNamespace.named(netns));
            loop = new SyncLoop(store, new Syncer(client, new NftRenderer(cfg), cfg.table()), Duration.ZERO,
                    Duration.ofHours(1), new SyncListener() {
                        @Override
                        public void synced(SyncResult r, long nanos, ObjectStore.Snapshot snap) {
                            commits.add(new Committed(System.nanoTime(), r.full(), snap.changed()));
                        }
                    });
        }

        /** The time of the first commit that is a full sync, or carries {@code id}. */
        long await(ServicePortName id) throws InterruptedException, TimeoutException {
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (true) {
                Committed c = commits.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (c == null) {
                    throw new TimeoutException("no commit " + (id == null ? "of a full sync" : "carrying " + id) + " within " + DEADLINE);
                }
                if (id == null ? c.full() : c.changed().contains(id)) {
                    return c.nanos();
                }
            }
        }

        @Override
        public void close() {
            loop.close();
            client.close();
        }
    }

    /** A directory of one file per service; {@code changes} files replaced (temp file and rename), one endpoint each. */
    public static Figures watchedDirectory(ProxyConfig cfg, ProxyState state, String netns, int changes) throws Exception {
        Path dir = Files.createTempDirectory("nftproxy-bench-watch");
        List<ServicePort> svcs = new ArrayList<>(state.services().values());
        HashMap<ServicePortName, List<Endpoint>> eps = new HashMap<>(state.endpoints());
        try {
            for (ServicePort svc : svcs) {
                write(dir, svc, eps.get(svc.id()));
            }
            long heapBefore = liveHeap();
            try (Daemon d = new Daemon(cfg, netns); ManifestSource src = new ManifestSource(dir, d.store)) {
                long t0 = System.nanoTime();
                src.start(true);
                d.loop.start();
                long start = d.await(null) - t0;
                long readBefore = src.filesRead();
                long[] lat = new long[changes];
                for (int c = 0; c < changes; c++) {
                    ServicePort svc = svcs.get((int) ((c * 7919L) % svcs.size()));
                    List<Endpoint> list = new ArrayList<>(eps.get(svc.id()));
                    list.set(c % list.size(), Endpoint.ready(BenchState.ip(0x0b000000 + c), 8080, "node-x"));
                    eps.put(svc.id(), list);
                    long t = System.nanoTime();
                    write(dir, svc, list);
                    lat[c] = d.await(svc.id()) - t;
                }
                Arrays.sort(lat);
                long read = src.filesRead() - readBefore;
                return new Figures(start, lat, new long[0], liveHeap() - heapBefore, rss(), read);
            }
        } finally {
            try (var s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /**
     * The daemon with its drift watcher, over a watched directory: {@code repeats} times someone
     * else flushes one of our chains ({@code nft flush chain}), timed from that command's return to
     * the commit of the repair (which rebuilds our tables whole).
     */
    public static Figures driftRepair(ProxyConfig cfg, ProxyState state, String netns, int repeats) throws Exception {
        Path dir = Files.createTempDirectory("nftproxy-bench-drift");
        try {
            StringBuilder sb = new StringBuilder();
            for (ServicePort svc : state.services().values()) {
                BenchYaml.append(sb, svc, state.endpointsOf(svc.id()), "-x");
            }
            Files.writeString(dir.resolve("services.yaml"), sb);
            ObjectStore store = new ObjectStore(cfg.hostname());
            LinkedBlockingQueue<Long> repaired = new LinkedBlockingQueue<>();
            LinkedBlockingQueue<Long> synced = new LinkedBlockingQueue<>();
            SyncListener times = new SyncListener() {
                @Override
                public void synced(SyncResult r, long nanos, ObjectStore.Snapshot snap) {
                    synced.add(System.nanoTime());
                }

                @Override
                public void repaired() {
                    repaired.add(System.nanoTime());
                }
            };
            long[] lat = new long[repeats];
            long start;
            try (NftClient client = NftClient.open(NetNamespace.named(netns)); ManifestSource src = new ManifestSource(dir, store);
                 ProxyServer server = new ProxyServer(cfg, store, client,
                         NetNamespace.named(netns), null, null, times)) {
                long t0 = System.nanoTime();
                src.start(false);
                server.start();
                Long first = synced.poll(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                if (first == null) {
                    throw new TimeoutException("no first sync within " + DEADLINE);
                }
                start = first - t0;
                for (int i = 0; i < repeats; i++) {
                    // Each repair takes the table over beside itself, under the other generation's names.
                    String services = client.listChains(Family.IP, cfg.table()).stream().map(Chain::name)
                            .filter(n -> Generation.original(n).equals(TableNames.SERVICES)).findFirst().orElseThrow();
                    CompareBench.exec("ip", "netns", "exec", netns, "nft", "flush", "chain", "ip", cfg.table(), services);
                    long t = System.nanoTime();
                    Long done = repaired.poll(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                    if (done == null) {
                        throw new TimeoutException("no repair within " + DEADLINE);
                    }
                    lat[i] = done - t;
                }
            }
            Arrays.sort(lat);
            return new Figures(start, lat, new long[0], 0, rss(), 0);
        } finally {
            try (var s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** As an editor or a config tool does it: a temporary file renamed over the old one. */
    static void write(Path dir, ServicePort svc, List<Endpoint> eps) throws IOException {
        StringBuilder sb = new StringBuilder();
        BenchYaml.append(sb, svc, eps, "-x");
        Path tmp = dir.resolve("." + svc.id().name() + ".tmp");
        Files.writeString(tmp, sb);
        Files.move(tmp, dir.resolve(svc.id().name() + ".yaml"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * fabric8's CRUD mock API server in this JVM, holding the services; informers started to the
     * first full sync, then {@code changes} EndpointSlice updates through the API. The heap figure
     * is the growth from before the informers started: the daemon's share, not the mock server's.
     */
    public static Figures informers(ProxyConfig cfg, ProxyState state, String netns, int changes) throws Exception {
        // The mock server logs every request through java.util.logging; a bench run makes thousands.
        MOCK_LOG.setLevel(Level.WARNING);
        KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new PagingApiDispatcher(), false);
        server.init();
        try (KubernetesClient client = server.createClient()) {
            List<ServicePort> svcs = new ArrayList<>(state.services().values());
            HashMap<ServicePortName, EndpointSlice> slices = new HashMap<>();
            for (ServicePort svc : svcs) {
                client.services().inNamespace(svc.id().namespace()).resource(service(svc)).create();
                EndpointSlice s = slice(svc, state.endpointsOf(svc.id()));
                slices.put(svc.id(), client.discovery().v1().endpointSlices().inNamespace(svc.id().namespace()).resource(s).create());
            }
            long heapBefore = liveHeap();
            try (Daemon d = new Daemon(cfg, netns); KubernetesSource src = new KubernetesSource(client, d.store)) {
                long t0 = System.nanoTime();
                src.start();
                d.loop.start();
                long start = d.await(null) - t0;
                long heap = liveHeap() - heapBefore;
                long[] lat = new long[changes];
                long[] api = new long[changes];
                for (int c = 0; c < changes; c++) {
                    ServicePort svc = svcs.get((int) ((c * 7919L) % svcs.size()));
                    EndpointSlice s = slices.get(svc.id());
                    List<io.fabric8.kubernetes.api.model.discovery.v1.Endpoint> list = new ArrayList<>(s.getEndpoints());
                    list.set(c % list.size(), endpoint(BenchState.ip(0x0b000000 + c).getHostAddress(), "node-x"));
                    s.setEndpoints(list);
                    long t = System.nanoTime();
                    s = client.discovery().v1().endpointSlices().inNamespace(svc.id().namespace()).resource(s).update();
                    api[c] = System.nanoTime() - t;
                    slices.put(svc.id(), s);
                    lat[c] = d.await(svc.id()) - t;
                }
                Arrays.sort(lat);
                Arrays.sort(api);
                return new Figures(start, lat, api, heap, rss(), 0);
            }
        } finally {
            server.destroy();
        }
    }

    static Service service(ServicePort svc) {
        ServiceBuilder b = new ServiceBuilder().withNewMetadata().withName(svc.id().name()).withNamespace(svc.id().namespace())
                .endMetadata().withNewSpec().withClusterIP(svc.clusterIPs().get(0).getHostAddress())
                .withType(svc.nodePort() != 0 ? "NodePort" : "ClusterIP")
                .addNewPort().withName(svc.id().port()).withPort(svc.port()).withProtocol("TCP")
                .withTargetPort(new IntOrString(8080)).withNodePort(svc.nodePort() != 0 ? svc.nodePort() : null).endPort()
                .endSpec();
        return b.build();
    }

    static EndpointSlice slice(ServicePort svc, List<Endpoint> eps) {
        EndpointSliceBuilder b = new EndpointSliceBuilder().withNewMetadata().withName(svc.id().name() + "-x")
                .withNamespace(svc.id().namespace()).addToLabels("kubernetes.io/service-name", svc.id().name()).endMetadata()
                .withAddressType("IPv4").addNewPort().withName(svc.id().port()).withPort(8080).withProtocol("TCP").endPort();
        for (Endpoint e : eps) {
            b.addToEndpoints(endpoint(e.address().getHostAddress(), e.nodeName()));
        }
        return b.build();
    }

    private static io.fabric8.kubernetes.api.model.discovery.v1.Endpoint endpoint(String ip, String node) {
        return new EndpointBuilder().withAddresses(ip).withNodeName(node).withNewConditions().withReady(true).endConditions().build();
    }

    /** Heap in use after a full collection (twice: the first may leave finalizable garbage). */
    public static long liveHeap() {
        System.gc();
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** This process's resident set, from /proc. */
    public static long rss() {
        return status(ProcessHandle.current().pid(), "VmRSS:");
    }

    /** A size in /proc/PID/status ({@code VmRSS:}, {@code VmHWM:}), in bytes; -1 once the process is gone. */
    public static long status(long pid, String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith(field)) {
                    return Long.parseLong(line.substring(field.length()).trim().split("\\s+")[0]) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }
}
