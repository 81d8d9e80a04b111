package io.nftproxy.tools;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.IntUnaryOperator;
import java.util.function.ObjIntConsumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import io.nftproxy.proxy.config.Durations;
import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.tools.bench.ApiServerBench;
import io.nftproxy.tools.bench.BenchState;
import io.nftproxy.tools.bench.BenchYaml;
import io.nftproxy.tools.bench.CompareBench;
import io.nftproxy.tools.bench.DaemonBench;
import io.nftproxy.tools.bench.FootprintBench;
import io.nftproxy.tools.bench.KernelMemory;
import io.nftproxy.tools.bench.KubeProxyNftLayout;
import io.nftproxy.tools.bench.LongestCommits;
import io.nftproxy.tools.bench.NeighbourProbe;
import io.nftproxy.tools.bench.Percentile;
import io.nftproxy.tools.bench.ProcessDaemonBench;
import io.nftproxy.tools.bench.ReadBack;
import io.nftproxy.tools.bench.Report;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.counters.ServiceCounters;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.LbAlgorithm;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.model.VersionedMap;
import io.nftproxy.proxy.source.ManifestSource;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Generation;
import io.nftproxy.proxy.sync.Syncer;

/**
 * The benchmark harness: full syncs of N services x k endpoints into a fresh network namespace,
 * then single-endpoint changes at that size, with userspace and kernel time apart; optionally
 * nft -f of the very same ruleset side by side, for a ratio measured in one run.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Measure full and partial sync times in fresh network namespaces (needs root).")
final class BenchCommand implements Callable<Integer> {
    @Option(names = "--services", split = ",", defaultValue = "1000,10000", description = "Service counts (default: ${DEFAULT-VALUE}).")
    List<Integer> services;

    @Option(names = "--endpoints", defaultValue = "10", description = "Endpoints per service (default: ${DEFAULT-VALUE}).")
    int endpoints;

    @Option(names = "--lb-algorithm", defaultValue = "random", paramLabel = "NAME", description = "How every generated"
            + " service picks its endpoints (its " + LbAlgorithm.ANNOTATION + " annotation: random, maglev, source-hash;"
            + " default: ${DEFAULT-VALUE}); the full sync also reports the kernel's slab it grew.")
    String lbAlgorithm;

    @Option(names = "--changes", defaultValue = "200", description = "Single-endpoint changes timed per size (default: ${DEFAULT-VALUE}).")
    int changes;

    @Option(names = "--run-once", description = "Also time 'run --manifests DIR --once' (parsing the YAML of the same"
            + " services, then one full sync), in another fresh namespace.")
    boolean runOnce;

    @Option(names = "--run-once-heap", paramLabel = "SIZE", description = "With --run-once: every service in one file, and"
            + " the one-shot JVM limited to -XmxSIZE (e.g. 256m), as bin/nftproxy run --once starts it with"
            + " NFTPROXY_JAVA_OPTS=-XmxSIZE.")
    String runOnceHeap;

    @Option(names = "--watch", description = "Also run the daemon on a watched directory of one file per service and"
            + " time file replacements to the kernel's ack, in another fresh namespace.")
    boolean watch;

    @Option(names = "--daemon-heap", paramLabel = "SIZE", description = "Also run the daemon as its own process, as"
            + " bin/nftproxy starts it with -XmxSIZE (e.g. 256m), over a watched directory of one file per service: first"
            + " full sync, file replaced to kernel ack, its heap after GC and its RSS.")
    String daemonHeap;

    @Option(names = "--informers", description = "Also run the daemon's informers against fabric8's mock API server in"
            + " this JVM: start to first full sync, EndpointSlice update to the kernel's ack.")
    boolean informers;

    @Option(names = "--api-server", description = "Also time kube-proxy's command line against an API server at an"
            + " address (fabric8's mock, HTTP, over a veth) from its start to the first /healthz 200, as a process of the"
            + " product jar and, with --image, as nftproxy's image under podman; and what JSON lists cost to decode.")
    boolean apiServer;

    @Option(names = "--image", paramLabel = "TAG", description = "With --api-server: the image to run (deploy/image/build).")
    String image;

    @Option(names = "--neighbour", description = "Also time another nftables user's one-element commits, in our network"
            + " namespace and in another, while we commit the first full sync, a re-assertion, a rebuild (replaced in one"
            + " transaction, and written beside the table in use) and a restart (a new syncer over our tables, both ways).")
    boolean neighbour;

    @Option(names = "--first-sync-batch", split = ",", paramLabel = "N[,N...]", description = "With --neighbour: the first"
            + " full sync onto a namespace without our tables in transactions of about N objects (0: one transaction);"
            + " several values are timed one after the other in the same run, our tables deleted in between"
            + " (default: the daemon's, ${DEFAULT-VALUE}).", defaultValue = "" + Syncer.FIRST_SYNC_BATCH)
    List<Integer> firstSyncBatches;

    @Option(names = "--read-back", description = "Also time reading our tables back from the kernel after the full sync,"
            + " without taking the lock other nftables users wait on: sets of fewer than 50,000 elements dumped, larger ones"
            + " read by key, every chain's rules listed (twice; what a restart onto our own table would cost to learn what"
            + " it holds).")
    boolean readBack;

    @Option(names = "--drift", description = "Also time the drift watcher's repair after someone else flushes one of"
            + " our chains, in another fresh namespace.")
    boolean drift;

    @Option(names = "--daemon-changes", defaultValue = "200", description = "Changes timed in --watch and --informers (default: ${DEFAULT-VALUE}).")
    int daemonChanges;

    @Option(names = "--compare-kube-proxy-layout", description = "Also time nft -f of kube-proxy's nftables-mode layout"
            + " (per-service numgen vmap, per-endpoint chains) for the same services, in another fresh namespace.")
    boolean compareKubeProxy;

    @Option(names = "--compare", description = "Side by side: nftproxy, kube-proxy's nftables layout (nft -f) and its iptables"
            + " layout (iptables-restore): full and partial syncs, and new-connection latency; CSV, Markdown and PNG in --out.")
    boolean compare;

    @Option(names = "--quick", description = "--compare at 100 and 1,000 services, data plane at 10 and 1,000; under two minutes.")
    boolean quick;

    @Option(names = "--backends", split = ",", defaultValue = "nftproxy,kube-nftables,kube-iptables",
            description = "Backends to compare (default: ${DEFAULT-VALUE}).")
    List<String> backends;

    @Option(names = "--repetitions", defaultValue = "20", description = "Repetitions of each partial change (default: ${DEFAULT-VALUE}).")
    int repetitions;

    @Option(names = "--budget", defaultValue = "120s", description = "Time one sync of one backend may take (default: ${DEFAULT-VALUE}).")
    String budget;

    @Option(names = "--connect-services", split = ",", defaultValue = "10,1000,10000,30000",
            description = "Services programmed while measuring connection latency (default: ${DEFAULT-VALUE}).")
    List<Integer> connectServices;

    @Option(names = "--connects", defaultValue = "300", description = "Connections timed per backend and size (default: ${DEFAULT-VALUE}).")
    int connects;

    @Option(names = "--many-endpoints", defaultValue = "200", description = "Endpoints of the mix's every thousandth service,"
            + " and of the large service each repetition adds and removes (default: ${DEFAULT-VALUE}).")
    int manyEndpoints;

    @Option(names = "--connect-endpoints", defaultValue = "1", description = "Endpoints of the service the data plane connects"
            + " to (one pod answers for every one of them; default: ${DEFAULT-VALUE}).")
    int connectEndpoints;

    @Option(names = "--out", defaultValue = "bench-results", description = "Where --compare writes results.csv, report.md and"
            + " the plots (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--no-data-plane", description = "With --compare: skip the connection latency.")
    boolean noDataPlane;

    @Option(names = "--kernel-time", description = "With --compare's data plane: sample every CPU with perf (cpu-clock;"
            + " linux-perf, root) during each connection series and report the kernel's time per new connection in"
            + " nft_do_chain.")
    boolean kernelTime;

    @Option(names = "--footprint", description = "What a node pays: the image's size (raw and gzipped), the product jar's,"
            + " and for each of --services (0 too) the daemon in the image (--image) as the DaemonSet runs it (its memory"
            + " limit and JAVA_TOOL_OPTIONS, kube-proxy's command line, an API server at an address; past "
            + FootprintBench.API_LIMIT + " services a manifests directory): start to /healthz 200, then resident memory,"
            + " heap, metaspace, code cache, threads, idle CPU, Native Memory Tracking's parts and the kernel's slab.")
    boolean footprint;

    @Option(names = "--settle", defaultValue = "30s", description = "With --footprint: time after the first sync before"
            + " measuring (default: ${DEFAULT-VALUE}).")
    String settle;

    @Option(names = "--idle", defaultValue = "10s", description = "With --footprint: window the idle CPU is measured over"
            + " (default: ${DEFAULT-VALUE}).")
    String idle;

    @Option(names = "--daemonset", paramLabel = "FILE", description = "With --footprint: the deployment whose DaemonSet's"
            + " limit and JVM options the container gets (default: deploy/nftproxy.yaml of the tree the product jar is in).")
    Path daemonSet;

    @Override
    public Integer call() throws Exception {
        if (compare || quick) {
            return compare();
        }
        if (footprint) {
            return footprint();
        }
        System.out.printf("%-9s %-9s %10s %10s %10s %10s %10s %9s %9s %9s %9s %9s%n", "services", "endpoints", "full_ms",
                "render_ms", "encode_ms", "kernel_ms", "messages", "chg_p50", "chg_p99", "chg_max", "add_p50", "add_p99");
        for (int n : services) {
            run(n);
        }
        return 0;
    }

    private int compare() throws Exception {
        List<Integer> sizes = quick ? List.of(100, 1000) : services;
        List<Integer> dataPlane = quick ? List.of(10, 1000) : connectServices;
        int reps = quick ? 5 : repetitions;
        int conns = quick ? 100 : connects;
        Duration limit = quick ? Duration.ofSeconds(60) : Durations.parse(budget);
        CompareBench bench = new CompareBench(backends, endpoints, reps, limit);
        bench.kernelTime(kernelTime);
        if (!endpointCount("--connect-endpoints", connectEndpoints) || !endpointCount("--many-endpoints", manyEndpoints)) {
            return 2;
        }
        bench.connectEndpoints(connectEndpoints);
        bench.manyEndpoints(manyEndpoints);
        bench.syncs(sizes);
        if (!noDataPlane) {
            bench.connects(dataPlane, conns);
        }
        String command = "bench " + (quick ? "--quick" : "--compare --services " + join(sizes) + " --endpoints " + endpoints
                + " --repetitions " + reps + " --connect-services " + join(dataPlane) + " --connects " + conns)
                + (connectEndpoints > 1 ? " --connect-endpoints " + connectEndpoints : "")
                + (manyEndpoints != BenchState.MANY_ENDPOINTS ? " --many-endpoints " + manyEndpoints : "")
                + (kernelTime ? " --kernel-time" : "") + " --backends "
                + String.join(",", backends);
        Report.write(out, bench.rows(), command);
        System.out.print(Report.markdown(bench.rows(), command));
        System.out.println("written: " + out.resolve("results.csv") + ", " + out.resolve("report.md") + ", "
                + out.resolve("sync.png") + ", " + out.resolve("connect.png"));
        return 0;
    }

    /** Whether {@code n} is an endpoint count the bench can give a service; if not, says so in one line. */
    private static boolean endpointCount(String flag, int n) {
        if (n >= 1 && n <= CompareBench.MAX_CONNECT_ENDPOINTS) {
            return true;
        }
        System.err.println("nftproxy: " + flag + " " + n + ": from 1 to " + CompareBench.MAX_CONNECT_ENDPOINTS);
        return false;
    }

    private int footprint() throws Exception {
        String tag = image != null ? image : "localhost/nftproxy:0.1.0";
        Path jar = Path.of(System.getProperty("nftproxy.jar", "proxy/target/nftproxy.jar")).toAbsolutePath();
        Path manifests = daemonSet != null ? daemonSet : jar.getParent().getParent().resolveSibling("deploy/nftproxy.yaml");
        FootprintBench.DaemonSet ds = FootprintBench.DaemonSet.of(manifests);
        long[] size = FootprintBench.imageSize(tag);
        System.out.printf("image %s: %.1f MB (gzip %.1f MB); product jar %s %.1f MiB; the DaemonSet (%s): --memory %s,"
                        + " JAVA_TOOL_OPTIONS=%s%n", tag, size[0] / 1e6, size[1] / 1e6, jar.getFileName(), Files.size(jar) / 1048576.0,
                manifests, ds.memoryLimit(), ds.javaToolOptions());
        System.out.printf("%-9s %-9s %8s %8s %8s %8s %9s %9s %9s %8s %8s %8s %8s%n", "services", "endpoints", "start_s",
                "rss_MB", "anon_MB", "file_MB", "heap_MB", "hcommit", "meta_MB", "code_MB", "threads", "idle_cpu", "slab_MB");
        List<FootprintBench.Figures> all = new ArrayList<>();
        for (int n : services) {
            FootprintBench.Figures f = FootprintBench.run(BenchState.synthetic(n, endpoints, 0), tag, ds, Durations.parse(settle),
                    Durations.parse(idle));
            all.add(f);
            System.out.printf("%-9d %-9d %8.2f %8.1f %8.1f %8.1f %9.1f %9.1f %9.1f %8.1f %8d %7.2f%% %8.1f%s%n", n, endpoints,
                    f.startNanos() / 1e9, f.rss() / 1e6, f.rssAnon() / 1e6, f.rssFile() / 1e6, f.heapUsed() / 1e6,
                    f.heapCommitted() / 1e6, f.metaspace() / 1e6, f.codeCache() / 1e6, f.threads(), f.idleCpuPercent(),
                    f.slab() / 1e6, f.source().startsWith("API") ? "" : "  (" + f.source() + ")");
        }
        for (FootprintBench.Figures f : all) {
            System.out.printf("NMT committed MB at %d services: %s, total %.1f%n", f.services(),
                    listed(f.nmtCommitted().entrySet().stream(), v -> String.format("%.1f", v / 1e6)), f.nmtTotal() / 1e6);
            System.out.printf("RSS MB by mapping at %d services (0.5 MB and more): %s%n", f.services(),
                    listed(f.rssByMapping().entrySet().stream().filter(e -> e.getValue() >= 512 * 1024),
                            v -> String.format("%.1f", v / 1e6)));
            System.out.printf("threads at %d services: %s%n", f.services(), listed(f.threadsByName().entrySet().stream(),
                    String::valueOf));
            System.out.printf("live heap at %d services (after a full collection): %.1f MB; largest MB: %s%n", f.services(),
                    f.live().total() / 1e6, listed(f.live().byClass().entrySet().stream().limit(12),
                            v -> String.format("%.1f", v / 1e6)));
        }
        return 0;
    }

    /** "name value, name value": a footprint's parts on one line. */
    private static <V> String listed(Stream<Map.Entry<String, V>> parts, Function<V, String> value) {
        return parts.map(e -> e.getKey() + " " + value.apply(e.getValue())).collect(Collectors.joining(", "));
    }

    private static String join(List<Integer> l) {
        return String.join(",", l.stream().map(String::valueOf).toList());
    }

    private void run(int n) throws Exception {
        String nsName = "nftproxy-bench-" + ProcessHandle.current().pid();
        exec("ip", "netns", "add", nsName);
        Neighbours near = null;
        try (NftClient client = NftClient.open(NetNamespace.named(nsName))) {
            NftRenderer renderer = new NftRenderer(BenchState.config());
            Syncer syncer = new Syncer(client, renderer, "nftproxy");
            LbAlgorithm algorithm = LbAlgorithm.of(lbAlgorithm);
            if (algorithm == null) {
                throw new IllegalArgumentException("--lb-algorithm " + lbAlgorithm + ": not one of " + LbAlgorithm.choices());
            }
            ProxyState state = BenchState.withAlgorithm(BenchState.synthetic(n, endpoints, 0), algorithm);
            System.gc();
            long slabBefore = algorithm.hashed() ? KernelMemory.settledSlabKb() : 0;
            near = neighbour ? new Neighbours(nsName) : null;
            SyncResult full = null;
            long fullNanos = 0;
            List<Integer> batches = neighbour ? firstSyncBatches : List.of(firstSyncBatches.get(0));
            for (int b = 0; b < batches.size(); b++) {
                if (b > 0) {
                    syncer.cleanup();
                    KernelMemory.settledSlabKb(); // the kernel frees the deleted tables asynchronously
                }
                syncer.firstSyncBatch(batches.get(b));
                LongestCommits commits = new LongestCommits(3);
                syncer.commitThrough(tx -> {
                    CommitStats st = client.commit(tx);
                    commits.add(tx, st.kernelNanos());
                    return st;
                });
                long t0 = System.nanoTime();
                full = syncer.sync(state, null);
                fullNanos = System.nanoTime() - t0;
                syncer.commitThrough(client::commit);
                if (near != null) {
                    near.report(String.format("first full sync, %s (%d, the longest %.0f ms to our thread; longest: %s)",
                            batches.get(b) == 0 ? "one transaction" : "transactions of ~" + batches.get(b) + " objects",
                            commits.count(), commits.maxNanos() / 1e6, commits.describe()), t0, System.nanoTime());
                }
            }
            if (algorithm.hashed()) {
                System.out.printf("          %s: the kernel's slab grew by %d MB in the full sync (%d elements)%n", lbAlgorithm,
                        (KernelMemory.slabKb() - slabBefore) / 1024, full.elements());
            }
            if (readBack) {
                for (int i = 0; i < 2; i++) {
                    System.out.println("read back: " + ReadBack.measure(client, syncer, "nftproxy", ServiceCounters.BY_KEY_FROM));
                }
            }
            if (near != null) {
                long r0 = System.nanoTime();
                syncer.sync(state, null);
                near.report("re-assertion (full sync over our rules)", r0, System.nanoTime());
                // A rebuild (what we hold forgotten) and a restart (a new syncer over our tables, which
                // the rest of the run uses): as before generations, in one transaction; then written
                // beside the table in use and switched to.
                syncer.firstSyncBatch(0);
                syncer.forgetCommitted();
                timeTakeover(near, syncer, client, state, "rebuild, table replaced in one transaction");
                syncer.firstSyncBatch(Syncer.FIRST_SYNC_BATCH);
                syncer.forgetCommitted();
                timeTakeover(near, syncer, client, state, "rebuild, written beside the table in use");
                syncer = new Syncer(client, renderer, "nftproxy");
                syncer.firstSyncBatch(0);
                timeTakeover(near, syncer, client, state, "restart, a new syncer replacing our table in one transaction");
                syncer = new Syncer(client, renderer, "nftproxy");
                timeTakeover(near, syncer, client, state, "restart, a new syncer written beside our table");
                near.close();
            }

            // Versioned, as the daemon's store keeps them: a new model costs the same at any size.
            VersionedMap<ServicePortName, ServicePort> svcs = new VersionedMap<>();
            state.services().forEach(svcs::put);
            VersionedMap<ServicePortName, List<Endpoint>> eps = new VersionedMap<>();
            state.endpoints().forEach(eps::put);
            // One endpoint of one service replaced; then one endpoint added (the service's count
            // changes: it moves between the pick tree's bit sets). Timed from the new model to the
            // kernel's ack.
            long[] lat = timeChanges(syncer, svcs, eps, state, c -> (c * 7919) % n,
                    (list, c) -> list.set(c % list.size(), Endpoint.ready(BenchState.ip(0x0b000000 + c), 8080, "node-x")));
            long[] add = timeChanges(syncer, svcs, eps, state, c -> (c * 104_729 + 13) % n,
                    (list, c) -> list.add(Endpoint.ready(BenchState.ip(0x0c000000 + c), 8080, "node-y")));
            System.out.printf("%-9d %-9d %10.0f %10.0f %10.0f %10.0f %10d %9.2f %9.2f %9.2f %9.2f %9.2f%n", n, endpoints,
                    fullNanos / 1e6, full.renderNanos() / 1e6, full.commit().encodeNanos() / 1e6,
                    full.commit().kernelNanos() / 1e6, full.commit().messages(),
                    Percentile.ms(lat, 0.5), Percentile.ms(lat, 0.99), Percentile.ms(lat, 1), Percentile.ms(add, 0.5),
                    Percentile.ms(add, 0.99));
            if (compareKubeProxy) {
                compare(state, nsName, fullNanos);
            }
            if (runOnce) {
                timeRunOnce(state, nsName);
            }
            if (watch) {
                daemon("watched directory of " + n + " files; file replaced", state, nsName + "-w",
                        (cfg, ns) -> DaemonBench.watchedDirectory(cfg, state, ns, daemonChanges));
            }
            if (daemonHeap != null) {
                String ns = nsName + "-p";
                exec("ip", "netns", "add", ns);
                try {
                    ProcessDaemonBench.Figures f = ProcessDaemonBench.run(launcher(daemonHeap), List.of("--hostname-override",
                            "node-a", "--cluster-cidr", "10.128.0.0/9", "--service-cidr", "10.96.0.0/12", "--node-ip",
                            "192.168.50.2"), state, ns, daemonChanges);
                    System.out.printf("          daemon process, -Xmx%s, watched directory of %d files: start to first full sync"
                                    + " %.0f ms; file replaced to kernel ack p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d changes);"
                                    + " heap after GC %s; RSS %d MB (peak %d MB)%n", daemonHeap, n, f.startNanos() / 1e6,
                            f.p(0.5), f.p(0.99), f.p(1), f.latencies().length,
                            f.heapBytes() < 0 ? "unknown (no jcmd)" : (f.heapBytes() >> 20) + " MB", f.rssBytes() >> 20,
                            f.peakRssBytes() >> 20);
                } finally {
                    deleteNetns(ns);
                }
            }
            if (drift) {
                String ns = nsName + "-d";
                exec("ip", "netns", "add", ns);
                try {
                    DaemonBench.Figures f = DaemonBench.driftRepair(BenchState.config(), state, ns, 10);
                    System.out.printf("          daemon with drift watcher: first sync %.0f ms; a foreign 'nft flush chain' to the"
                            + " repair committed: p50 %.0f ms, max %.0f ms (%d repairs)%n", f.startNanos() / 1e6, f.p(0.5),
                            f.p(1), f.latencies().length);
                } finally {
                    deleteNetns(ns);
                }
            }
            if (apiServer) {
                ApiServerBench.Figures f = ApiServerBench.run(state, image, launcher("768m"));
                System.out.printf("          kube-proxy's command line, API server at an address: start to /healthz 200:%s"
                                + " process %.0f ms%s; JSON lists (%d services, %d slices) %.1f MB, decoded in %.0f ms%n",
                        image == null ? "" : String.format(" image %s %.0f ms (ratio %.2f),", image, f.containerNanos() / 1e6,
                                (double) f.containerNanos() / f.processNanos()),
                        f.processNanos() / 1e6, f.containerSync().isEmpty() ? "" : " [container: " + f.containerSync() + "]",
                        n, n, f.jsonBytes() / 1e6, f.decodeNanos() / 1e6);
            }
            if (informers) {
                daemon("informers on the mock API; EndpointSlice updated", state, nsName + "-i",
                        (cfg, ns) -> DaemonBench.informers(cfg, state, ns, daemonChanges));
            }
        } finally {
            if (near != null) {
                near.close(); // a phase that threw leaves the probes' namespace otherwise
            }
            exec("ip", "netns", "del", nsName);
        }
    }

    /**
     * One full sync over our tables, with the neighbours' waits meanwhile, our transactions' count
     * and longest, and when the new ruleset carried traffic: the end of the last transaction
     * committed while the generation before the sync was in use (the switch; the replacement when
     * in one transaction), before the old generation is deleted.
     */
    private static void timeTakeover(Neighbours near, Syncer syncer, NftClient client, ProxyState state, String what)
            throws Exception {
        LongestCommits commits = new LongestCommits(3);
        Generation before = syncer.generation();
        long[] live = {0};
        syncer.commitThrough(tx -> {
            boolean old = syncer.generation().equals(before);
            CommitStats st = client.commit(tx);
            commits.add(tx, st.kernelNanos());
            if (old) {
                live[0] = System.nanoTime();
            }
            return st;
        });
        long t0 = System.nanoTime();
        syncer.sync(state, null);
        long t1 = System.nanoTime();
        syncer.commitThrough(client::commit);
        near.report(String.format("%s (%d transactions, the longest %.0f ms to our thread; live after %.1f s, done after"
                        + " %.1f s; generation %d; longest: %s)", what, commits.count(), commits.maxNanos() / 1e6,
                (live[0] - t0) / 1e9, (t1 - t0) / 1e9, syncer.generation().number(), commits.describe()), t0, t1);
    }

    /** Two {@link NeighbourProbe}s, in our namespace and in one of their own, printed per phase. */
    private static final class Neighbours implements AutoCloseable {
        private final String otherNs;
        private final NeighbourProbe same;
        private final NeighbourProbe other;
        private boolean closed;

        Neighbours(String ours) throws Exception {
            otherNs = ours + "-n";
            exec("ip", "netns", "add", otherNs);
            same = new NeighbourProbe(ours, "same");
            other = new NeighbourProbe(otherNs, "other");
        }

        void report(String phase, long from, long to) {
            System.out.printf("          %s, %.0f ms: another user's one-element commits waited: same namespace %s;"
                    + " another namespace %s%n", phase, (to - from) / 1e6, same.summary(from, to), other.summary(from, to));
        }

        @Override
        public void close() throws Exception {
            if (closed) {
                return;
            }
            closed = true;
            same.close();
            other.close();
            exec("ip", "netns", "del", otherNs);
        }
    }

    private interface DaemonRun {
        DaemonBench.Figures run(ProxyConfig cfg, String netns) throws Exception;
    }

    private void daemon(String what, ProxyState state, String netns, DaemonRun body) throws Exception {
        exec("ip", "netns", "add", netns);
        try {
            DaemonBench.Figures f = body.run(BenchState.config(), netns);
            System.out.printf("          daemon, %s: start to first full sync %.0f ms; change to kernel ack p50 %.2f ms,"
                            + " p99 %.2f ms, max %.2f ms (%d changes%s%s); daemon's heap after GC %d MB (bench JVM RSS %d MB)%n",
                    what, f.startNanos() / 1e6, f.p(0.5), f.p(0.99), f.p(1), f.latencies().length,
                    f.filesRead() > 0 ? ", " + f.filesRead() + " files re-read" : "",
                    f.apiLatencies().length > 0 ? String.format(", of which the API's answer p50 %.2f ms", f.apiP(0.5)) : "",
                    f.heapBytes() >> 20, f.rssBytes() >> 20);
        } finally {
            deleteNetns(netns);
        }
    }

    private long[] timeChanges(Syncer syncer, VersionedMap<ServicePortName, ServicePort> svcs,
                               VersionedMap<ServicePortName, List<Endpoint>> eps, ProxyState state,
                               IntUnaryOperator pick,
                               ObjIntConsumer<List<Endpoint>> mutate) throws Exception {
        long[] lat = new long[changes];
        for (int c = 0; c < changes; c++) {
            ServicePortName id = new ServicePortName("bench", "svc-" + pick.applyAsInt(c), "http", Protocol.TCP);
            List<Endpoint> list = new ArrayList<>(eps.get(id));
            mutate.accept(list, c);
            eps.put(id, list);
            long s = System.nanoTime();
            ProxyState changed = new ProxyState(svcs.snapshot(), eps.snapshot(), state.node());
            syncer.sync(changed, Set.of(id));
            lat[c] = System.nanoTime() - s;
        }
        Arrays.sort(lat);
        return lat;
    }

    /**
     * The same services as one YAML file, through {@code run --manifests DIR --once} in a fresh
     * JVM started as bin/nftproxy starts it (the build's class-data-sharing archive, both compiler tiers):
     * the wall clock a user sees, start-up and reading included. Peak RSS is sampled from /proc.
     */
    private void timeRunOnce(ProxyState state, String ours) throws Exception {
        Path dir = Files.createTempDirectory("nftproxy-bench-manifests");
        String other = ours + "-once";
        try {
            // Files of up to 5,000 services (about 6 MB): one file per namespace-sized group, as
            // large clusters' manifests come. With a heap limit, files as large as the reader
            // takes (all 30k in one): the one-shot must not need more than the daemon. A file past
            // the reader's limit would be refused, and the run would time nothing.
            boolean large = runOnceHeap != null;
            long fileLimit = ManifestSource.MAX_FILE_BYTES * 3 / 4;
            StringBuilder sb = new StringBuilder();
            long bytes = 0;
            int i = 0;
            int files = 0;
            for (ServicePort svc : state.services().values()) {
                BenchYaml.append(sb, svc, state.endpointsOf(svc.id()), "-x");
                if (++i == state.services().size() || (large ? sb.length() >= fileLimit : i % 5000 == 0)) {
                    Files.writeString(dir.resolve(String.format("services-%03d.yaml", files++)), sb);
                    bytes += sb.length();
                    sb.setLength(0);
                }
            }
            exec("ip", "netns", "add", other);
            List<String> cmd = launcher(runOnceHeap);
            cmd.addAll(List.of("run", "--manifests", dir.toString(), "--netns", other, "--once",
                    "--hostname-override", "node-a", "--cluster-cidr", "10.128.0.0/9", "--service-cidr", "10.96.0.0/12",
                    "--node-ip", "192.168.50.2"));
            exec("sync"); // the files written back before the clock starts, not beside the process timed
            long t0 = System.nanoTime();
            Path log = Files.createTempFile("nftproxy-bench-once", ".log");
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            long peak = 0;
            while (!p.waitFor(5, TimeUnit.MILLISECONDS)) {
                peak = Math.max(peak, DaemonBench.status(p.pid(), "VmHWM:"));
            }
            long took = System.nanoTime() - t0;
            List<String> out = Files.readAllLines(log);
            Files.delete(log);
            if (p.exitValue() != 0) {
                throw new IllegalStateException("run --once exited " + p.exitValue() + ": "
                        + String.join(" | ", out.subList(Math.max(0, out.size() - 3), out.size())));
            }
            System.out.printf("          run --manifests (%.1f MB of YAML in %s) --once, fresh JVM%s: %.0f ms wall, peak RSS >= %d MB, exit %d%n",
                    bytes / 1e6, files == 1 ? "one file" : large ? files + " files" : "files of 5,000 services",
                    runOnceHeap == null ? "" : " -Xmx" + runOnceHeap, took / 1e6, peak >> 20, p.exitValue());
        } finally {
            deleteNetns(other);
            try (var s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /**
     * The command that starts the product as a node starts it: the launcher of the product jar's
     * tree ({@code -Dnftproxy.jar}, which bin/nftproxy sets; the launcher {@code bin/nftproxy}
     * beside {@code proxy/target}, or the one {@code -Dnftproxy.launcher} names), told the jar,
     * this JVM's Java and the heap limit ({@code null}: none), so that the JVM options measured are
     * the ones the launcher chooses for the command that follows. {@code env} and the launcher
     * both exec, so the process started is the product's JVM itself.
     */
    static List<String> launcher(String heap) {
        String named = System.getProperty("nftproxy.jar");
        if (named == null) {
            throw new IllegalStateException("the product jar is not named: start the bench with -Dnftproxy.jar=JAR"
                    + " (bin/nftproxy bench does)");
        }
        Path jar = Path.of(named).toAbsolutePath();
        String given = System.getProperty("nftproxy.launcher");
        Path module = jar.getParent() == null ? null : jar.getParent().getParent();
        Path launcher = given != null ? Path.of(given) : module == null ? null : module.resolveSibling("bin/nftproxy");
        if (launcher == null || !Files.isExecutable(launcher)) {
            throw new IllegalStateException("no launcher " + (launcher == null ? "" : "at " + launcher + " ")
                    + "for the product jar " + jar + ": name it with -Dnftproxy.launcher=PATH");
        }
        return new ArrayList<>(List.of("env", "NFTPROXY_JAR=" + jar, "JAVA_HOME=" + System.getProperty("java.home"),
                "NFTPROXY_JAVA_OPTS=" + (heap == null ? "" : "-Xmx" + heap), launcher.toString()));
    }

    private void compare(ProxyState state, String ours, long oursNanos) throws Exception {
        Path script = Files.createTempFile("nftproxy-bench", ".nft");
        String other = ours + "-kp";
        try {
            Files.writeString(script, KubeProxyNftLayout.full(KubeProxyNftLayout.of(state)));
            exec("ip", "netns", "add", other);
            long t0 = System.nanoTime();
            exec("ip", "netns", "exec", other, "nft", "-f", script.toString());
            long nftNanos = System.nanoTime() - t0;
            System.out.printf("          kube-proxy nftables layout via nft -f: %.0f ms; nftproxy full sync: %.0f ms;"
                    + " ratio %.1fx%n", nftNanos / 1e6, oursNanos / 1e6, (double) nftNanos / oursNanos);
        } finally {
            Files.deleteIfExists(script);
            deleteNetns(other);
        }
    }

    /**
     * Deletes a namespace of a phase and waits until the kernel has freed what it held: it does so
     * asynchronously, and a table of a million elements freed beside the next phase's timed
     * process took CPU from it (the daemon's start at 100k, right after the run --once phase).
     */
    private static void deleteNetns(String ns) throws IOException, InterruptedException {
        exec("ip", "netns", "del", ns);
        KernelMemory.settledSlabKb();
    }

    private static void exec(String... cmd) throws IOException, InterruptedException {
        CompareBench.exec(cmd);
    }
}
