package io.nftproxy.proxy.cli;

import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.Durations;
import io.nftproxy.proxy.config.KubeProxyConfigReader;
import io.nftproxy.proxy.config.KubeProxyConfiguration;
import io.nftproxy.proxy.config.LocalDetection;
import io.nftproxy.proxy.config.NodePortAddresses;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.metrics.ZPages;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.nodesetup.ConntrackSysctls;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Runs the proxy: watch the source, keep the kernel's rules in sync. */
@Command(name = "run", mixinStandardHelpOptions = true, description = "Run the service proxy.")
final class RunCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);

    @Mixin
    SourceOptions sources = new SourceOptions();

    @Option(names = "--config", paramLabel = "FILE", description = "A KubeProxyConfiguration file, as kube-proxy reads it;"
            + " flags override it.")
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

    @Option(names = "--mode", paramLabel = "nftables|iptables", description = "Backend (default: the config file's mode, else nftables).")
    String mode;

    @Option(names = "--healthz-bind-address", paramLabel = "HOST:PORT", description = "Health endpoint (default 0.0.0.0:10256).")
    String healthzBindAddress;

    @Option(names = "--metrics-bind-address", paramLabel = "HOST:PORT", description = "Metrics endpoint (default 127.0.0.1:10249).")
    String metricsBindAddress;

    @Option(names = "--service-counters", description = "Count new connections per service port, and refused ones, in the"
            + " kernel's set elements; exported on /metrics as nftproxy_service_*connections_total (nftables mode).")
    boolean serviceCounters;

    @Option(names = "--endpoint-counters", description = "Also count new connections per endpoint of each service port"
            + " (nftproxy_endpoint_connections_total): a counter in every endpoint map element, read by key at each scrape,"
            + " about 6 µs an element (implies --service-counters; nftables mode).")
    boolean endpointCounters;

    @Mixin
    ConntrackOptions conntrackFlags = new ConntrackOptions();

    @Mixin
    NetnsOption ns = new NetnsOption();

    ProxyConfig proxyConfig(KubeProxyConfiguration file) throws Exception {
        String host = hostname != null ? hostname
                : !file.hostnameOverride().isBlank() ? file.hostnameOverride().trim().toLowerCase(Locale.ROOT)
                : InetAddress.getLocalHost().getHostName();
        List<InetAddress> ips = new ArrayList<>();
        for (String s : nodeIPs) {
            ips.add(Inet.parse(s.trim()));
        }
        if (ips.isEmpty()) {
            ips.addAll(bindAddressIPs(file.bindAddress()));
        }
        List<Cidr> cluster = cidrs(clusterCIDRs != null ? clusterCIDRs : file.clusterCIDRs(),
                clusterCIDRs != null ? "--cluster-cidr" : "clusterCIDR");
        List<Cidr> services = cidrs(serviceCIDRs, "--service-cidr");
        List<String> npa = nodePortAddresses != null ? nodePortAddresses : file.nodePortAddresses();
        boolean masqAll = masqueradeAll != null ? masqueradeAll : file.sync().masqueradeAll();
        int bit = masqueradeBit != null ? masqueradeBit : file.sync().masqueradeBit();
        Duration min = minSyncPeriod != null ? Durations.parse(minSyncPeriod) : file.sync().minSyncPeriod();
        Duration full = syncPeriod != null ? Durations.parse(syncPeriod) : file.sync().syncPeriod();
        LocalDetection local = LocalDetection.parse(detectLocalMode != null ? detectLocalMode : file.detectLocalMode(),
                podBridgeInterface != null ? podBridgeInterface : file.bridgeInterface(),
                podInterfaceNamePrefix != null ? podInterfaceNamePrefix : file.interfaceNamePrefix());
        return ProxyConfig.builder(host)
                .nodeIPs(ips)
                .clusterCIDRs(cluster)
                .serviceCIDRs(services)
                .nodePortAddresses(nodePortCidrs(npa, nodePortAddresses != null ? "--nodeport-addresses" : "nodePortAddresses"))
                .masqueradeAll(masqAll)
                .masqueradeBit(bit)
                .minSyncPeriod(min)
                .syncPeriod(full)
                .table(ns.table)
                .localDetection(local)
                .serviceCounters(serviceCounters)
                .endpointCounters(endpointCounters)
                .build();
    }

    /** kube-proxy's bindAddress: the node's primary IP when it is not the wildcard. */
    static List<InetAddress> bindAddressIPs(String bindAddress) {
        if (bindAddress == null || bindAddress.isBlank()) {
            return List.of();
        }
        InetAddress a = Inet.parse(bindAddress.trim());
        return a.isAnyLocalAddress() ? List.of() : List.of(a);
    }

    /**
     * nodePortAddresses: CIDRs, "primary" (the default: the node's primary IPs, which is empty
     * here) or "all" (every address: 0.0.0.0/0 and ::/0). kube-proxy's alpha "localhost" (its
     * userspace proxy for loopback NodePorts) is refused.
     */
    static List<Cidr> nodePortCidrs(List<String> npa, String what) {
        if (npa.contains("localhost")) {
            throw new IllegalArgumentException(what + ": 'localhost' (kube-proxy's alpha KubeProxyNFTablesLocalhostNodePorts)"
                    + " is not supported: NodePorts are never served on loopback here");
        }
        if (npa.contains("all")) {
            return List.of(NodePortAddresses.all(IpFamily.V4), NodePortAddresses.all(IpFamily.V6));
        }
        List<String> cidrs = npa.stream().filter(a -> !a.equals("primary")).toList();
        if (cidrs.size() < npa.size() && !cidrs.isEmpty()) {
            throw new IllegalArgumentException(what + ": 'primary' cannot be combined with CIDRs " + cidrs);
        }
        return RunCommand.cidrs(cidrs, what);
    }

    /** CIDRs from a flag or a field; a bad one is an error naming it ({@code what}). */
    static List<Cidr> cidrs(List<String> in, String what) {
        List<Cidr> out = new ArrayList<>();
        for (String s : in) {
            if (!s.isBlank()) {
                try {
                    out.add(Cidr.parse(s.trim()));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(what + " '" + s.trim() + "': " + e.getMessage(), e);
                }
            }
        }
        return out;
    }

    /** The configuration file, or kube-proxy's defaults without one; what it says is logged. */
    static KubeProxyConfiguration readConfig(Path config) {
        if (config == null) {
            return KubeProxyConfiguration.defaults();
        }
        KubeProxyConfigReader.Read read = KubeProxyConfigReader.read(config);
        read.notes().forEach(LOG::info);
        read.warnings().forEach(LOG::warn);
        return read.config();
    }

    @Override
    public Integer call() throws Exception {
        KubeProxyConfiguration file = readConfig(config);
        Logging.fromConfig(file.loggingFormat(), file.verbosity());
        String backend = mode != null ? mode : file.mode();
        if (!"nftables".equals(backend) && !"iptables".equals(backend)) {
            System.err.println("nftproxy: unknown --mode '" + backend + "' (expected nftables or iptables)");
            return 2;
        }
        boolean iptables = "iptables".equals(backend);
        Launch.Builder launch = sources.applyTo(Launch.builder());
        if (sources.given() == 0 && !file.clientConnection().kubeconfig().isEmpty()) {
            launch.kubeconfig(Path.of(file.clientConnection().kubeconfig())); // kube-proxy's meaning of the field
        } else if (sources.given() != 1) {
            System.err.println("nftproxy: give exactly one of --manifests DIR, --kubeconfig PATH (or --master URL) or --in-cluster");
            return 2;
        }
        if ((serviceCounters || endpointCounters) && iptables) {
            System.err.println("nftproxy: " + (serviceCounters ? "--service-counters" : "--endpoint-counters")
                    + " needs --mode nftables (iptables mode has no counting maps)");
            return 2;
        }
        if (dryRun && (!once || iptables)) {
            System.err.println("nftproxy: --dry-run needs --once and --mode nftables");
            return 2;
        }
        String proxyName = serviceProxyName != null ? serviceProxyName
                : file.serviceProxyName().isEmpty() ? null : file.serviceProxyName();
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
        // With kube-proxy's file, its bindAddressHardFail (false by default); without one, a port that
        // cannot be bound stops the start, as nftproxy run always did.
        launch.cfg(proxyConfig(file).withBindHardFail(config == null || file.bindAddressHardFail()))
                .iptables(iptables)
                .netns(ns.netns)
                .once(once)
                .dryRun(dryRun)
                .proxyName(proxyName)
                .metricsAt(metricsBindAddress != null ? metricsBindAddress : file.metricsBindAddress())
                .healthzAt(healthzBindAddress != null ? healthzBindAddress : file.healthzBindAddress())
                .resync(file.configSyncPeriod())
                .zpages(ZPages.of("nftproxy", Launch.flags(spec)))
                .apiQps(file.clientConnection().qps())
                .apiBurst(file.clientConnection().burst())
                .oomScoreAdj(config == null ? null : file.oomScoreAdj()); // kube-proxy's file says how; without one, left alone
        KubeProxyConfiguration.Conntrack ct;
        try {
            ct = conntrackFlags.over(file.conntrack());
        } catch (IllegalArgumentException e) {
            System.err.println("nftproxy: " + e.getMessage());
            return 2;
        }
        if (!dryRun) {
            // As kube-proxy's start (and nftproxy's kube-proxy command line): conntrack's sysctls,
            // in the namespace this run programs (the global ones only in the host's).
            if (ns.netns != null) {
                ns.namespace().call(() -> ConntrackSysctls.apply(ct, Path.of("/proc/sys"), Path.of("/sys"), false));
            } else {
                ConntrackSysctls.apply(ct, Path.of("/proc/sys"), Path.of("/sys"), ConntrackSysctls.inHostNamespace());
            }
        }
        return launch.build().run();
    }
}
