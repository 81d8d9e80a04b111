package io.nftproxy.proxy.cli;

import java.io.IOException;
import java.net.Inet6Address;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.events.EventRecorder;
import io.nftproxy.proxy.iptables.Commands;
import io.nftproxy.proxy.iptables.IptablesSyncer;
import io.nftproxy.proxy.metrics.ZPages;
import io.nftproxy.proxy.nodesetup.KubeProxyLeftovers;
import io.nftproxy.proxy.nodesetup.LegacyIptablesLeftovers;
import io.nftproxy.proxy.nodesetup.Procfs;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.server.ProxyServer;
import io.nftproxy.proxy.source.Kubeconfig;
import io.nftproxy.proxy.source.KubernetesSource;
import io.nftproxy.proxy.source.ManifestSource;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.source.ProxySelection;
import io.nftproxy.proxy.source.Source;
import io.nftproxy.proxy.sync.Backend;
import io.nftproxy.proxy.sync.DryRun;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.proxy.sync.SyncLoop;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * What runs on a node once a command line (nftproxy's own, or kube-proxy's) has been read into
 * settings: the source, the backend, the health and metrics servers, the sync loop. Both command
 * lines end here, so they behave alike in everything but their spelling.
 */
final class Launch {
    private static final Logger LOG = LoggerFactory.getLogger(Launch.class);

    /** Where the objects come from: exactly one of these. */
    private final Path manifests;
    private final Path kubeconfig;
    private final String master;
    private final boolean inCluster;

    /** The settings; the run adds what it reads of the node (conntrack's liberal TCP). */
    private final ProxyConfig cfg;
    private final boolean iptables;
    private final String netns;
    private final boolean once;
    private final boolean dryRun;
    private final String proxyName;
    private final String healthzAt;
    private final String metricsAt;
    /** How often the informers resync (configSyncPeriod). */
    private final Duration resync;
    /** The API client's request limit (clientConnection.qps and burst). */
    private final float apiQps;
    private final int apiBurst;
    /** The command line's name and flags, for /flagz and /statusz. */
    private final ZPages zpages;
    /** Written to /proc/self/oom_score_adj when the daemon starts; null leaves it alone. */
    private final Integer oomScoreAdj;

    private Launch(Builder b) {
        manifests = b.manifests;
        kubeconfig = b.kubeconfig;
        master = b.master;
        inCluster = b.inCluster;
        cfg = b.cfg;
        iptables = b.iptables;
        netns = b.netns;
        once = b.once;
        dryRun = b.dryRun;
        proxyName = b.proxyName;
        healthzAt = b.healthzAt;
        metricsAt = b.metricsAt;
        resync = b.resync;
        apiQps = b.apiQps;
        apiBurst = b.apiBurst;
        zpages = b.zpages;
        oomScoreAdj = b.oomScoreAdj;
    }

    /** Settings named as the command lines set them; kube-proxy's defaults where a command leaves one out. */
    static Builder builder() {
        return new Builder();
    }

    private Builder toBuilder() {
        return builder().manifests(manifests).kubeconfig(kubeconfig).master(master).inCluster(inCluster).cfg(cfg)
                .iptables(iptables).netns(netns).once(once).dryRun(dryRun).proxyName(proxyName).healthzAt(healthzAt)
                .metricsAt(metricsAt).resync(resync).apiQps(apiQps).apiBurst(apiBurst).zpages(zpages).oomScoreAdj(oomScoreAdj);
    }

    /** What a command line read, named; {@link #build} makes the launch. */
    static final class Builder {
        private Path manifests;
        private Path kubeconfig;
        private String master;
        private boolean inCluster;
        private ProxyConfig cfg;
        private boolean iptables;
        private String netns;
        private boolean once;
        private boolean dryRun;
        private String proxyName;
        private String healthzAt;
        private String metricsAt;
        private Duration resync = Duration.ofMinutes(15);
        private float apiQps = 5;
        private int apiBurst = 10;
        private ZPages zpages = ZPages.of("nftproxy", Map.of());
        private Integer oomScoreAdj;

        private Builder() {
        }

        /** A manifests directory. */
        Builder manifests(Path v) {
            manifests = v;
            return this;
        }

        /** A kubeconfig (and {@link #master} over its server, or alone). */
        Builder kubeconfig(Path v) {
            kubeconfig = v;
            return this;
        }

        Builder master(String v) {
            master = v;
            return this;
        }

        /** The service account of the pod this runs in. */
        Builder inCluster(boolean v) {
            inCluster = v;
            return this;
        }

        Builder cfg(ProxyConfig v) {
            cfg = v;
            return this;
        }

        Builder iptables(boolean v) {
            iptables = v;
            return this;
        }

        Builder netns(String v) {
            netns = v;
            return this;
        }

        Builder once(boolean v) {
            once = v;
            return this;
        }

        Builder dryRun(boolean v) {
            dryRun = v;
            return this;
        }

        /** --service-proxy-name; null or empty: the Services of no such label. */
        Builder proxyName(String v) {
            proxyName = v;
            return this;
        }

        Builder healthzAt(String v) {
            healthzAt = v;
            return this;
        }

        Builder metricsAt(String v) {
            metricsAt = v;
            return this;
        }

        Builder resync(Duration v) {
            resync = v;
            return this;
        }

        Builder apiQps(float v) {
            apiQps = v;
            return this;
        }

        Builder apiBurst(int v) {
            apiBurst = v;
            return this;
        }

        Builder zpages(ZPages v) {
            zpages = v;
            return this;
        }

        Builder oomScoreAdj(Integer v) {
            oomScoreAdj = v;
            return this;
        }

        Launch build() {
            return new Launch(this);
        }
    }

    /** The source given, not reading yet; a kubeconfig that cannot be used is refused here, naming the file. */
    Source openSource(ObjectStore store) throws IOException {
        if (manifests != null) {
            return new ManifestSource(manifests, store);
        }
        Config k8s = inCluster ? new ConfigBuilder().build() : Kubeconfig.load(kubeconfig, master);
        KubernetesSource source = new KubernetesSource(k8s, store, apiQps, apiBurst);
        source.resyncEvery(resync);
        // --service-cidr overrides the cluster's ServiceCIDRs; beside kube-proxy they are its own.
        source.watchServiceCidrs(cfg.serviceCIDRs().isEmpty() && (proxyName == null || proxyName.isEmpty()));
        return source;
    }

    /** Runs on the node (or once); the exit code. */
    int run() throws Exception {
        if (!dryRun) {
            checkBackend(iptables);
        }
        return toBuilder().cfg(cfg.withDropInvalid(!tcpBeLiberal())).build().start();
    }

    /** The run, with the node's own settings read. */
    @SuppressWarnings("try") // the lock is held while the try block runs; its body need not name it
    private int start() throws Exception {
        ObjectStore store = new ObjectStore(cfg.hostname(),
                proxyName == null || proxyName.isEmpty() ? ProxySelection.DEFAULT : new ProxySelection(proxyName));
        NetNamespace ns = netns == null ? null : NetNamespace.named(netns);
        try (Source source = openSource(store);
             InstanceLock lock = dryRun ? null : InstanceLock.acquire(InstanceLock.DIR, netns, iptables ? "iptables" : cfg.table());
             NftClient client = iptables || dryRun ? null : NftClient.open(ns)) {
            Backend backend = iptables ? new IptablesSyncer(cfg, netns) : syncer(client);
            // Once our rules are in: what kube-proxy left would go on handling service traffic
            // beside them (not when kube-proxy runs beside us, serving the other services).
            boolean removeLeftovers = !iptables && !dryRun && (proxyName == null || proxyName.isEmpty());
            SyncListener log = new SyncListener() {
                private boolean leftoversRemoved;

                @Override
                public void synced(SyncResult r, long nanos, ObjectStore.Snapshot snap) {
                    if (removeLeftovers && !leftoversRemoved) {
                        leftoversRemoved = true;
                        KubeProxyLeftovers.remove(client);
                        LegacyIptablesLeftovers.remove(netns);
                    }
                    // The numbers again as key/values, for --logging-format json.
                    LOG.atInfo().addKeyValue("full", r.full()).addKeyValue("servicePorts", snap.state().services().size())
                            .addKeyValue("operations", r.commit().operations()).addKeyValue("elapsedMs", nanos / 1_000_000)
                            .addKeyValue("kernelMs", r.commit().kernelNanos() / 1_000_000)
                            .log("{} sync: {} service ports, {} chains changed, {} chains / {} rules / {} elements owned,"
                                    + " {} ops in {} messages, {} ms (kernel {} ms)",
                            r.full() ? "full" : "partial", snap.state().services().size(), r.changedChains(),
                            r.chains(), r.rules(), r.elements(), r.commit().operations(), r.commit().messages(),
                            nanos / 1_000_000, r.commit().kernelNanos() / 1_000_000);
                }
            };
            if (once) {
                SourceOptions.readOnce(source);
                warnIfEmpty(source, store);
                try (SyncLoop loop = new SyncLoop(store, backend, cfg.minSyncPeriod(), cfg.fullSyncPeriod(), log)) {
                    SyncResult r = loop.syncOnce(true);
                    if (backend.underOtherNames()) {
                        // Written beside what a run before left, under the other generation's
                        // names: once more under the table's own, as the daemon's loop does.
                        backend.forgetCommitted();
                        r = loop.syncOnce(true);
                    }
                    ObjectStore.Snapshot snap = store.snapshot();
                    new TreeMap<>(snap.errors()).values().forEach(e -> System.err.println("nftproxy: " + e));
                    r.rejectedServices().forEach(e -> System.err.println("nftproxy: kernel refused " + e));
                    System.out.println((dryRun ? "dry run: would sync " : "synced ") + r.chains() + " chains, " + r.rules()
                            + " rules, " + r.elements() + " set elements into "
                            + (iptables ? "iptables chains KUBE-*" : "table " + cfg.table())
                            + (netns == null ? "" : " in namespace " + netns));
                    // A file refused whole has no last good content in a one-shot: the others are
                    // synced, as always, but what that file held (if a run before programmed it)
                    // is gone from the kernel, which a script must hear of.
                    int unusable = source.unusable();
                    if (unusable > 0) {
                        boolean one = unusable == 1;
                        System.err.println("nftproxy: " + unusable + (one ? " file" : " files") + " of " + source.where()
                                + " could not be used: the sync " + (dryRun ? "would go" : "went") + " on without "
                                + (one ? "it, and none of its services " : "them, and none of their services ")
                                + (dryRun ? "would be" : one ? "is" : "are") + " in the kernel");
                        return 1;
                    }
                    return 0;
                }
            }
            if (inCluster) {
                warnIfApiServerBehindUs(client);
            }
            return serve(store, backend, client, ns, log, source);
        }
    }

    private Syncer syncer(NftClient client) {
        Syncer s = new Syncer(client, new NftRenderer(cfg), cfg.table());
        if (dryRun) {
            s.commitThrough(new DryRun(tx -> System.out.println(tx)));
            s.firstSyncBatch(0); // the ruleset printed as one transaction, as a reader takes it in
        }
        return s;
    }

    /**
     * The long-running proxy, until SIGTERM. The health and metrics endpoints answer from the
     * start; syncing starts once the source has listed everything once (an API server that does
     * not answer is retried meanwhile, and the rules of an earlier run stay in the kernel).
     */
    private int serve(ObjectStore store, Backend backend, NftClient client, NetNamespace ns, SyncListener log,
                      Source source) throws Exception {
        if (oomScoreAdj != null) {
            applyOomScoreAdj(oomScoreAdj);
        }
        CompletableFuture<Void> stopping = new CompletableFuture<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stopping.complete(null), "shutdown"));
        try (ProxyServer server = new ProxyServer(cfg, store, backend, client, ns,
                BindAddress.isOff(metricsAt) ? null : BindAddress.parse(metricsAt, "--metrics-bind-address"),
                BindAddress.isOff(healthzAt) ? null : BindAddress.parse(healthzAt, "--healthz-bind-address"),
                SyncListener.all(List.of(log, new StartHeapRelease())),
                source instanceof KubernetesSource k ? k.events() : EventRecorder.NONE, zpages)) {
            LOG.info("nftproxy starting for node {} ({} mode, {}{}); metrics on {}, health on {}; reading {}", cfg.hostname(),
                    iptables ? "iptables" : "nftables", iptables ? "chains KUBE-*" : "table " + cfg.table(),
                    netns == null ? "" : ", namespace " + netns, metricsAt, healthzAt, source.where());
            CompletableFuture<Void> listed = source.listAndWatch(true);
            CompletableFuture.anyOf(listed, stopping).exceptionally(e -> null).get();
            if (!stopping.isDone()) {
                listed.get(); // a source that failed for good (an API server that does not answer is retried instead)
                warnIfEmpty(source, store);
                if (source instanceof KubernetesSource k) {
                    k.announceStart(); // kube-proxy's Starting event on the Node
                }
                server.start();
                LOG.info("nftproxy running for node {}", cfg.hostname());
                stopping.get();
            }
            // Rules stay in the kernel on exit, as kube-proxy leaves them: traffic keeps flowing.
            return 0;
        }
    }

    /** The options of a command line as /flagz shows them: name without dashes to the value given, or empty. */
    static Map<String, String> flags(CommandSpec spec) {
        Map<String, String> out = new TreeMap<>();
        for (OptionSpec o : spec.options()) {
            if (o.usageHelp() || o.versionHelp()) {
                continue;
            }
            Object v = o.getValue();
            out.put(o.longestName().replaceFirst("^-+", ""), v == null ? "" : v instanceof Object[] a
                    ? String.join(",", Arrays.stream(a).map(String::valueOf).toList()) : String.valueOf(v));
        }
        return out;
    }

    /** The reference backend drives iptables' own tools: without them, say so before anything else. */
    static void checkBackend(boolean iptables) {
        checkBackend(iptables, Commands::onPath);
    }

    static void checkBackend(boolean iptables, Predicate<String> installed) {
        if (iptables && !installed.test("iptables-restore")) {
            throw new IllegalArgumentException("iptables mode needs iptables-restore, which is not installed here:"
                    + " use mode nftables, or install iptables");
        }
    }

    /**
     * Whether nf_conntrack_tcp_be_liberal is set in the namespace we program: then, as kube-proxy,
     * no rule drops INVALID packets (conntrack marks only out-of-window resets INVALID). Unreadable
     * counts as not set, as in kube-proxy.
     */
    private boolean tcpBeLiberal() {
        NetNamespace ns = netns == null ? null : NetNamespace.named(netns);
        Path sysctl = Path.of("/proc/sys/net/netfilter/nf_conntrack_tcp_be_liberal");
        try {
            String v = ns == null ? Procfs.read(sysctl) : ns.call(() -> Procfs.read(sysctl));
            boolean liberal = !v.equals("0");
            if (liberal) {
                LOG.info("nf_conntrack_tcp_be_liberal set, not installing DROP rules for INVALID packets");
            }
            return liberal;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }


    /**
     * kube-proxy's OOM score adjustment (-999 by default: the last process on the node to be
     * killed). Lowering it needs CAP_SYS_RESOURCE; without it, as kube-proxy, a debug line only.
     */
    static void applyOomScoreAdj(int value) {
        try {
            Files.writeString(Path.of("/proc/self/oom_score_adj"), Integer.toString(value));
            LOG.debug("oom_score_adj set to {}", value);
        } catch (IOException e) {
            LOG.debug("could not set oom_score_adj to {}: {}", value, e.getMessage());
        }
    }

    /**
     * Before the first sync replaces every rule: a source that lists no Service at all is more
     * likely a mistake (an empty or wrong directory, another cluster) than a cluster without even
     * its {@code kubernetes} Service. Said once; the sync goes on, as kube-proxy's would.
     */
    private static void warnIfEmpty(Source source, ObjectStore store) {
        if (store.serviceCount() == 0) {
            LOG.warn("{} lists no Services: the first sync removes every service rule this node has", source.where());
        }
    }

    /**
     * --in-cluster reaches the API server through the kubernetes Service's ClusterIP, which only a
     * service proxy makes reachable: with none of our rules in the kernel (after a reboot, or
     * kube-proxy --cleanup), nothing may forward it.
     */
    private void warnIfApiServerBehindUs(NftClient client) {
        String host = System.getenv("KUBERNETES_SERVICE_HOST");
        if (host == null || client == null) {
            return;
        }
        try {
            if (!client.hasTable(Inet.parse(host) instanceof Inet6Address ? Family.IP6 : Family.IP, cfg.table())) {
                LOG.warn("--in-cluster reaches the API server at {} (the kubernetes Service's ClusterIP), which no rule of ours"
                        + " forwards yet: unless another proxy does, nothing can be listed. Give a kubeconfig whose server is the"
                        + " control plane's address (--kubeconfig, or clientConnection.kubeconfig), as kubeadm does for kube-proxy",
                        host);
            }
        } catch (RuntimeException | NftException e) {
            LOG.debug("could not check for our table: {}", e.getMessage());
        }
    }
}
