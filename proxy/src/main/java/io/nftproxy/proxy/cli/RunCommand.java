package io.nftproxy.proxy.cli;

import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.proxy.config.LocalDetection;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.iptables.IptablesSyncer;
import io.nftproxy.proxy.server.ProxyServer;
import io.nftproxy.proxy.sync.Backend;
import io.nftproxy.proxy.sync.DryRun;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.source.KubernetesSource;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.source.ProxySelection;
import io.nftproxy.proxy.source.Source;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.proxy.sync.SyncLoop;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Runs the proxy: watch the source, keep the kernel's rules in sync. */
@Command(name = "run", mixinStandardHelpOptions = true, description = "Run the service proxy.")
final class RunCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);

    @Mixin
    SourceOptions sources = new SourceOptions();

    @Option(names = "--config", paramLabel = "FILE", description = "A KubeProxyConfiguration file; flags override it.")
    Path config;

    @Option(names = "--hostname-override", paramLabel = "NAME", description = "This node's name (default: the host name).")
    String hostname;

    @Option(names = "--node-ip", split = ",", paramLabel = "IP", description = "This node's primary IPs.")
    List<String> nodeIPs = new ArrayList<>();

    @Option(names = "--cluster-cidr", split = ",", paramLabel = "CIDR", description = "The pod network(s).")
    List<String> clusterCIDRs;

    @Option(names = "--service-cidr", split = ",", paramLabel = "CIDR", description = "The service network(s): unallocated IPs are dropped.")
    List<String> serviceCIDRs = new ArrayList<>();

    @Option(names = "--nodeport-addresses", split = ",", paramLabel = "CIDR|primary", description = "Where NodePorts are served (default: primary).")
    List<String> nodePortAddresses;

    @Option(names = "--detect-local-mode", paramLabel = "MODE", description = "How traffic from local pods is told apart:"
            + " ClusterCIDR (default), NodeCIDR, BridgeInterface or InterfaceNamePrefix.")
    String detectLocalMode;

    @Option(names = "--pod-bridge-interface", paramLabel = "NAME", description = "The pods' bridge, for BridgeInterface.")
    String podBridgeInterface;

    @Option(names = "--pod-interface-name-prefix", paramLabel = "PREFIX", description = "The pods' interface name prefix,"
            + " for InterfaceNamePrefix.")
    String podInterfaceNamePrefix;

    @Option(names = "--masquerade-all", description = "Masquerade all traffic to ClusterIPs.")
    Boolean masqueradeAll;

    @Option(names = "--masquerade-bit", paramLabel = "N", description = "Mark bit for traffic to masquerade (default 14: 0x4000).")
    Integer masqueradeBit;

    @Option(names = "--min-sync-period", paramLabel = "D", description = "Minimum time between syncs (default 1s).")
    String minSyncPeriod;

    @Option(names = "--sync-period", paramLabel = "D", description = "The longest a queued change may wait before /healthz reports it (twice this;"
            + " default 30s). Full re-syncs run hourly (or after this, if longer), as kube-proxy's.")
    String syncPeriod;

    @Option(names = "--service-proxy-name", paramLabel = "NAME", description = "Serve only the Services (and their"
            + " EndpointSlices) labelled service.kubernetes.io/service-proxy-name=NAME, beside kube-proxy, which serves the rest.")
    String serviceProxyName;

    @Option(names = "--once", description = "One full sync, then exit.")
    boolean once;

    @Option(names = "--dry-run", description = "With --once: print the transaction in nft syntax instead of committing it (no root needed).")
    boolean dryRun;

    @Option(names = "--mode", paramLabel = "nftables|iptables", defaultValue = "nftables", description = "Backend (default: ${DEFAULT-VALUE}).")
    String mode;

    @Option(names = "--healthz-bind-address", paramLabel = "HOST:PORT", description = "Health endpoint (default 0.0.0.0:10256).")
    String healthzBindAddress;

    @Option(names = "--metrics-bind-address", paramLabel = "HOST:PORT", description = "Metrics endpoint (default 127.0.0.1:10249).")
    String metricsBindAddress;

    @Option(names = "--service-counters", description = "Count new connections per service port and endpoint, and refused"
            + " ones, in the kernel's map elements; exported on /metrics as nftproxy_*_connections_total (nftables mode).")
    boolean serviceCounters;

    @Mixin
    NetnsOption ns = new NetnsOption();

    ProxyConfig proxyConfig(ConfigFile file) throws Exception {
        String host = hostname != null ? hostname
                : file != null && file.hostnameOverride() != null ? file.hostnameOverride()
                : InetAddress.getLocalHost().getHostName();
        List<InetAddress> ips = new ArrayList<>();
        for (String s : nodeIPs) {
            ips.add(Inet.parse(s.trim()));
        }
        List<Cidr> cluster = cidrs(clusterCIDRs != null ? clusterCIDRs : file != null ? file.clusterCIDRs() : List.of());
        List<Cidr> services = cidrs(serviceCIDRs);
        List<String> npa = nodePortAddresses != null ? nodePortAddresses : file != null ? file.nodePortAddresses() : List.of();
        List<Cidr> npaCidrs = npa.size() == 1 && npa.get(0).equals("primary") ? List.of() : cidrs(npa);
        boolean masqAll = masqueradeAll != null ? masqueradeAll : file != null && Boolean.TRUE.equals(file.masqueradeAll());
        int bit = masqueradeBit != null ? masqueradeBit : file != null && file.masqueradeBit() != null ? file.masqueradeBit() : 14;
        Duration min = Durations.parse(minSyncPeriod != null ? minSyncPeriod
                : file != null && file.minSyncPeriod() != null ? file.minSyncPeriod() : "1s");
        Duration full = Durations.parse(syncPeriod != null ? syncPeriod
                : file != null && file.syncPeriod() != null ? file.syncPeriod() : "30s");
        LocalDetection local = LocalDetection.parse(
                detectLocalMode != null ? detectLocalMode : file != null ? file.detectLocalMode() : null,
                podBridgeInterface != null ? podBridgeInterface : file != null ? file.bridgeInterface() : null,
                podInterfaceNamePrefix != null ? podInterfaceNamePrefix : file != null ? file.interfaceNamePrefix() : null);
        return new ProxyConfig(host, ips, cluster, services, npaCidrs, masqAll, bit, min, full, ns.table, local)
                .withServiceCounters(serviceCounters);
    }

    private static List<Cidr> cidrs(List<String> in) {
        List<Cidr> out = new ArrayList<>();
        for (String s : in) {
            if (!s.isBlank()) {
                out.add(Cidr.parse(s.trim()));
            }
        }
        return out;
    }

    @Override
    @SuppressWarnings("try") // the source runs while the try block does; its body need not name it
    public Integer call() throws Exception {
        if (!"nftables".equals(mode) && !"iptables".equals(mode)) {
            System.err.println("nftproxy: unknown --mode '" + mode + "' (expected nftables or iptables)");
            return 2;
        }
        if (sources.given() != 1) {
            System.err.println("nftproxy: give exactly one of --manifests DIR, --kubeconfig PATH or --in-cluster");
            return 2;
        }
        if (serviceCounters && iptablesMode()) {
            System.err.println("nftproxy: --service-counters needs --mode nftables (iptables mode has no counting maps)");
            return 2;
        }
        if (dryRun && (!once || iptablesMode())) {
            System.err.println("nftproxy: --dry-run needs --once and --mode nftables");
            return 2;
        }
        ConfigFile file = config == null ? null : ConfigFile.read(config);
        String proxyName = serviceProxyName != null ? serviceProxyName : file != null ? file.serviceProxyName() : null;
        if (proxyName != null && (proxyName.isBlank() || !proxyName.matches("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
                || proxyName.length() > 63)) {
            System.err.println("nftproxy: --service-proxy-name '" + proxyName + "' is not a valid label value");
            return 2;
        }
        if (proxyName != null && !serviceCIDRs.isEmpty()) {
            // Dropping unallocated IPs of the service network would also drop kube-proxy's
            // services that have no endpoints, before kube-proxy can reject them.
            System.err.println("nftproxy: --service-cidr cannot be used with --service-proxy-name: beside kube-proxy,"
                    + " the service network's unallocated addresses are kube-proxy's to handle");
            return 2;
        }
        ProxyConfig cfg = proxyConfig(file);
        ObjectStore store = new ObjectStore(cfg.hostname(),
                proxyName == null ? ProxySelection.DEFAULT : new ProxySelection(proxyName));
        boolean iptables = iptablesMode();
        try (Source source = sources.open(store);
             InstanceLock lock = dryRun ? null : InstanceLock.acquire(InstanceLock.DIR, ns.netns, iptables ? "iptables" : cfg.table());
             NftClient client = iptables || dryRun ? null : NftClient.open(ns.namespace())) {
            Backend backend = iptables ? new IptablesSyncer(cfg, ns.netns) : syncer(client, cfg);
            SyncListener log = new SyncListener() {
                @Override
                public void synced(SyncResult r, long nanos, ObjectStore.Snapshot snap) {
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
                    ObjectStore.Snapshot snap = store.snapshot();
                    new TreeMap<>(snap.errors()).values().forEach(e -> System.err.println("nftproxy: " + e));
                    r.rejectedServices().forEach(e -> System.err.println("nftproxy: kernel refused " + e));
                    System.out.println((dryRun ? "dry run: would sync " : "synced ") + r.chains() + " chains, " + r.rules() + " rules, " + r.elements()
                            + " set elements into " + (iptables ? "iptables chains KUBE-*" : "table " + cfg.table())
                            + (ns.netns == null ? "" : " in namespace " + ns.netns));
                    return 0;
                }
            }
            if (sources.inCluster) {
                warnIfApiServerBehindUs(client, cfg);
            }
            return serve(cfg, file, store, backend, client, log, source);
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
    private void warnIfApiServerBehindUs(NftClient client, ProxyConfig cfg) {
        String host = System.getenv("KUBERNETES_SERVICE_HOST");
        if (host == null || client == null) {
            return;
        }
        try {
            if (!client.hasTable(Inet.parse(host) instanceof java.net.Inet6Address ? io.nftproxy.netlink.nft.Family.IP6
                    : io.nftproxy.netlink.nft.Family.IP, cfg.table())) {
                LOG.warn("--in-cluster reaches the API server at {} (the kubernetes Service's ClusterIP), which no rule of ours"
                        + " forwards yet: unless another proxy does, nothing can be listed. Give a kubeconfig whose server is the"
                        + " control plane's address (--kubeconfig, or clientConnection.kubeconfig), as kubeadm does for kube-proxy",
                        host);
            }
        } catch (RuntimeException | io.nftproxy.netlink.nft.NftException e) {
            LOG.debug("could not check for our table: {}", e.getMessage());
        }
    }

    private boolean iptablesMode() {
        return "iptables".equals(mode);
    }

    private Syncer syncer(NftClient client, ProxyConfig cfg) {
        Syncer s = new Syncer(client, new NftRenderer(cfg), cfg.table());
        if (dryRun) {
            s.commitThrough(new DryRun(tx -> System.out.println(tx)));
        }
        return s;
    }

    /**
     * The long-running proxy, until SIGTERM. The health and metrics endpoints answer from the
     * start; syncing starts once the source has listed everything once (an API server that does
     * not answer is retried meanwhile, and the rules of an earlier run stay in the kernel).
     */
    private int serve(ProxyConfig cfg, ConfigFile file, ObjectStore store, Backend backend, NftClient client,
                      SyncListener log, Source source) throws Exception {
        String metricsAt = metricsBindAddress != null ? metricsBindAddress
                : file != null && file.metricsBindAddress() != null ? file.metricsBindAddress() : "127.0.0.1:10249";
        String healthAt = healthzBindAddress != null ? healthzBindAddress
                : file != null && file.healthzBindAddress() != null ? file.healthzBindAddress() : "0.0.0.0:10256";
        CompletableFuture<Void> stopping = new CompletableFuture<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stopping.complete(null), "shutdown"));
        try (ProxyServer server = new ProxyServer(cfg, store, backend, client, ns.namespace(),
                BindAddress.isOff(metricsAt) ? null : BindAddress.parse(metricsAt, "--metrics-bind-address"),
                BindAddress.isOff(healthAt) ? null : BindAddress.parse(healthAt, "--healthz-bind-address"), log)) {
            LOG.info("nftproxy starting for node {} (table {}{}); metrics on {}, health on {}; reading {}", cfg.hostname(),
                    cfg.table(), ns.netns == null ? "" : ", namespace " + ns.netns, metricsAt, healthAt, source.where());
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
}
