package io.nftproxy.proxy.cli;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.nftproxy.proxy.config.KubeProxyConfigReader;
import io.nftproxy.proxy.config.KubeProxyConfiguration;
import io.nftproxy.proxy.config.LocalDetection;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.metrics.ZPages;
import io.nftproxy.proxy.nodesetup.ConntrackSysctls;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * kube-proxy's command line (the flags of cmd/kube-proxy/app/options.go), so that nftproxy's
 * image runs where kube-proxy's did, from kube-proxy's own DaemonSet: {@code /usr/local/bin/kube-proxy
 * --config=/var/lib/kube-proxy/config.conf --hostname-override=$(NODE_NAME)}.
 *
 * <p>kube-proxy's precedence: without {@code --config}, the flags over kube-proxy's defaults; with
 * it, the file alone, except the logging flags and {@code --hostname-override} (and the flags that
 * are no configuration field: {@code --master}, {@code --cleanup}, {@code --init-only},
 * {@code --write-config-to}). kube-proxy ignores the other flags silently then; nftproxy names
 * each one it ignores. Flags that cannot apply to nftproxy (ipvs and Windows) are refused, or,
 * where kube-proxy itself ignores them outside their mode, named in a warning.
 */
@Command(name = "kube-proxy", mixinStandardHelpOptions = false,
        description = "kube-proxy's command line: run nftproxy where kube-proxy ran (the image's /usr/local/bin/kube-proxy).")
final class KubeProxyCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(KubeProxyCommand.class);
    /** The flags that set a KubeProxyConfiguration field, with the field (or fields) they set. */
    static final Map<String, List<String>> FIELD_FLAGS = new LinkedHashMap<>();

    static {
        FIELD_FLAGS.put("--feature-gates", List.of("featureGates"));
        FIELD_FLAGS.put("--kubeconfig", List.of("clientConnection.kubeconfig"));
        FIELD_FLAGS.put("--kube-api-content-type", List.of("clientConnection.contentType"));
        FIELD_FLAGS.put("--kube-api-qps", List.of("clientConnection.qps"));
        FIELD_FLAGS.put("--kube-api-burst", List.of("clientConnection.burst"));
        FIELD_FLAGS.put("--bind-address", List.of("bindAddress"));
        FIELD_FLAGS.put("--healthz-bind-address", List.of("healthzBindAddress"));
        FIELD_FLAGS.put("--metrics-bind-address", List.of("metricsBindAddress"));
        FIELD_FLAGS.put("--bind-address-hard-fail", List.of("bindAddressHardFail"));
        FIELD_FLAGS.put("--profiling", List.of("enableProfiling"));
        FIELD_FLAGS.put("--show-hidden-metrics-for-version", List.of("showHiddenMetricsForVersion"));
        FIELD_FLAGS.put("--proxy-mode", List.of("mode"));
        FIELD_FLAGS.put("--iptables-masquerade-bit", List.of("iptables.masqueradeBit"));
        FIELD_FLAGS.put("--masquerade-all", List.of("iptables.masqueradeAll", "nftables.masqueradeAll"));
        FIELD_FLAGS.put("--iptables-localhost-nodeports", List.of("iptables.localhostNodePorts"));
        // kube-proxy keeps one sync period for every mode but ipvs: these flags set nftables' too.
        FIELD_FLAGS.put("--iptables-sync-period", List.of("iptables.syncPeriod", "nftables.syncPeriod"));
        FIELD_FLAGS.put("--iptables-min-sync-period", List.of("iptables.minSyncPeriod", "nftables.minSyncPeriod"));
        FIELD_FLAGS.put("--ipvs-sync-period", List.of("ipvs.syncPeriod"));
        FIELD_FLAGS.put("--ipvs-min-sync-period", List.of("ipvs.minSyncPeriod"));
        FIELD_FLAGS.put("--ipvs-scheduler", List.of("ipvs.scheduler"));
        FIELD_FLAGS.put("--ipvs-exclude-cidrs", List.of("ipvs.excludeCIDRs"));
        FIELD_FLAGS.put("--ipvs-strict-arp", List.of("ipvs.strictARP"));
        FIELD_FLAGS.put("--ipvs-tcp-timeout", List.of("ipvs.tcpTimeout"));
        FIELD_FLAGS.put("--ipvs-tcpfin-timeout", List.of("ipvs.tcpFinTimeout"));
        FIELD_FLAGS.put("--ipvs-udp-timeout", List.of("ipvs.udpTimeout"));
        FIELD_FLAGS.put("--detect-local-mode", List.of("detectLocalMode"));
        FIELD_FLAGS.put("--pod-bridge-interface", List.of("detectLocal.bridgeInterface"));
        FIELD_FLAGS.put("--pod-interface-name-prefix", List.of("detectLocal.interfaceNamePrefix"));
        FIELD_FLAGS.put("--cluster-cidr", List.of("clusterCIDR"));
        FIELD_FLAGS.put("--nodeport-addresses", List.of("nodePortAddresses"));
        FIELD_FLAGS.put("--oom-score-adj", List.of("oomScoreAdj"));
        FIELD_FLAGS.put("--conntrack-max-per-core", List.of("conntrack.maxPerCore"));
        FIELD_FLAGS.put("--conntrack-min", List.of("conntrack.min"));
        FIELD_FLAGS.put("--conntrack-tcp-timeout-established", List.of("conntrack.tcpEstablishedTimeout"));
        FIELD_FLAGS.put("--conntrack-tcp-timeout-close-wait", List.of("conntrack.tcpCloseWaitTimeout"));
        FIELD_FLAGS.put("--conntrack-tcp-be-liberal", List.of("conntrack.tcpBeLiberal"));
        FIELD_FLAGS.put("--conntrack-udp-timeout", List.of("conntrack.udpTimeout"));
        FIELD_FLAGS.put("--conntrack-udp-timeout-stream", List.of("conntrack.udpStreamTimeout"));
        FIELD_FLAGS.put("--config-sync-period", List.of("configSyncPeriod"));
    }

    /** The version of kube-proxy whose command line and configuration this one follows. */
    static final String KUBE_PROXY_VERSION = "v1.35.0";

    @Spec
    CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE") String config;
    @Option(names = "--write-config-to", paramLabel = "FILE") String writeConfigTo;
    @Option(names = "--cleanup", arity = "0..1", fallbackValue = "true") boolean cleanup;
    @Option(names = "--init-only", arity = "0..1", fallbackValue = "true") boolean initOnly;
    @Option(names = "--version", arity = "0..1", fallbackValue = "true") String version;
    @Option(names = {"-h", "--help"}, usageHelp = true) boolean help;
    @Option(names = "--master", paramLabel = "URL") String master;
    @Option(names = "--hostname-override", paramLabel = "NAME") String hostnameOverride;

    @Option(names = "--feature-gates", split = ",") List<String> featureGates;
    @Option(names = "--kubeconfig") String kubeconfig;
    @Option(names = "--kube-api-content-type") String contentType;
    @Option(names = "--kube-api-qps") String qps;
    @Option(names = "--kube-api-burst") String burst;
    @Option(names = "--bind-address") String bindAddress;
    @Option(names = "--healthz-bind-address") String healthzBindAddress;
    @Option(names = "--metrics-bind-address") String metricsBindAddress;
    @Option(names = "--bind-address-hard-fail", arity = "0..1", fallbackValue = "true") Boolean bindAddressHardFail;
    @Option(names = "--profiling", arity = "0..1", fallbackValue = "true") Boolean profiling;
    @Option(names = "--show-hidden-metrics-for-version") String showHidden;
    @Option(names = "--proxy-mode") String proxyMode;
    @Option(names = "--iptables-masquerade-bit") String masqueradeBit;
    @Option(names = "--masquerade-all", arity = "0..1", fallbackValue = "true") Boolean masqueradeAll;
    @Option(names = "--iptables-localhost-nodeports", arity = "0..1", fallbackValue = "true") Boolean localhostNodePorts;
    @Option(names = "--iptables-sync-period") String syncPeriod;
    @Option(names = "--iptables-min-sync-period") String minSyncPeriod;
    @Option(names = "--ipvs-sync-period") String ipvsSyncPeriod;
    @Option(names = "--ipvs-min-sync-period") String ipvsMinSyncPeriod;
    @Option(names = "--ipvs-scheduler") String ipvsScheduler;
    @Option(names = "--ipvs-exclude-cidrs", split = ",") List<String> ipvsExcludeCidrs;
    @Option(names = "--ipvs-strict-arp", arity = "0..1", fallbackValue = "true") Boolean ipvsStrictArp;
    @Option(names = "--ipvs-tcp-timeout") String ipvsTcpTimeout;
    @Option(names = "--ipvs-tcpfin-timeout") String ipvsTcpFinTimeout;
    @Option(names = "--ipvs-udp-timeout") String ipvsUdpTimeout;
    @Option(names = "--detect-local-mode") String detectLocalMode;
    @Option(names = "--pod-bridge-interface") String podBridgeInterface;
    @Option(names = "--pod-interface-name-prefix") String podInterfaceNamePrefix;
    @Option(names = "--cluster-cidr") String clusterCIDR;
    @Option(names = "--nodeport-addresses", split = ",") List<String> nodePortAddresses;
    @Option(names = "--oom-score-adj") String oomScoreAdj;
    @Option(names = "--conntrack-max-per-core") String conntrackMaxPerCore;
    @Option(names = "--conntrack-min") String conntrackMin;
    @Option(names = "--conntrack-tcp-timeout-established") String conntrackEstablished;
    @Option(names = "--conntrack-tcp-timeout-close-wait") String conntrackCloseWait;
    @Option(names = "--conntrack-tcp-be-liberal", arity = "0..1", fallbackValue = "true") Boolean conntrackBeLiberal;
    @Option(names = "--conntrack-udp-timeout") String conntrackUdpTimeout;
    @Option(names = "--conntrack-udp-timeout-stream") String conntrackUdpTimeoutStream;
    @Option(names = "--config-sync-period") String configSyncPeriod;
    @Option(names = "--healthz-port") Integer healthzPort;
    @Option(names = "--metrics-port") Integer metricsPort;

    // component-base's logging flags (-v and --logging-format are nftproxy's own, inherited)
    @Option(names = "--vmodule") String vmodule;
    @Option(names = "--log-flush-frequency") String logFlushFrequency;
    @Option(names = {"--log-json-split-stream", "--log-text-split-stream"}, arity = "0..1", fallbackValue = "true")
    Boolean logSplitStream;
    @Option(names = {"--log-json-info-buffer-size", "--log-text-info-buffer-size"}) String logInfoBufferSize;

    // nftproxy's own, beside kube-proxy's flags (not a KubeProxyConfiguration field).
    @Option(names = "--service-counters", description = "Count connections per service port in the kernel"
            + " (nftproxy's own flag; see nftproxy run --help).")
    boolean serviceCounters;
    @Option(names = "--endpoint-counters", description = "Count connections per endpoint as well"
            + " (nftproxy's own flag; see nftproxy run --help).")
    boolean endpointCounters;

    // Windows' flags: refused.
    @Option(names = {"--windows-service", "--enable-dsr", "--forward-healthcheck-vip"}, arity = "0..1", fallbackValue = "true")
    Boolean windowsFlag;
    @Option(names = {"--source-vip", "--network-name", "--root-hnsendpoint-name"}) String windowsValue;

    /** Which of these options the command line gave. */
    private boolean given(String name) {
        return spec.commandLine().getParseResult().hasMatchedOption(name);
    }

    @Override
    public Integer call() throws Exception {
        if (version != null && !version.equals("false")) {
            System.out.println("Kubernetes " + KUBE_PROXY_VERSION + " (nftproxy 0.1.0: kube-proxy's command line, nf_tables over"
                    + " netlink)");
            return 0;
        }
        for (String w : List.of("--windows-service", "--enable-dsr", "--forward-healthcheck-vip", "--source-vip", "--network-name",
                "--root-hnsendpoint-name")) {
            if (given(w)) {
                System.err.println("nftproxy: " + w + " is a Windows flag (kernelspace mode); nftproxy runs on Linux only");
                return 1;
            }
        }
        if (proxyMode != null && (proxyMode.equals("ipvs") || proxyMode.equals("kernelspace"))) {
            System.err.println("nftproxy: --proxy-mode " + proxyMode + " is not supported: nftproxy runs nftables (or iptables,"
                    + " as the reference); give --proxy-mode nftables or leave it out");
            return 1;
        }
        if (vmodule != null && !vmodule.isBlank()) {
            LOG.warn("--vmodule does not apply to nftproxy and is ignored: per-file verbosity is a Go logging feature");
        }
        KubeProxyConfigReader.Read read;
        if (config != null) {
            read = KubeProxyConfigReader.read(Path.of(config));
            for (String flag : FIELD_FLAGS.keySet()) {
                if (given(flag)) {
                    // kube-proxy ignores these silently when --config is given; say it.
                    LOG.warn("{} is ignored because --config is given (as kube-proxy ignores it): set {} in {}", flag,
                            String.join(" / ", FIELD_FLAGS.get(flag)), config);
                }
            }
            for (String flag : List.of("--healthz-port", "--metrics-port")) {
                if (given(flag)) {
                    LOG.warn("{} is ignored because --config is given (as kube-proxy ignores it)", flag);
                }
            }
        } else {
            read = fromFlags();
        }
        read.notes().forEach(LOG::info);
        read.warnings().forEach(LOG::warn);
        KubeProxyConfiguration c = read.config();
        Logging.fromConfig(c.loggingFormat(), c.verbosity());
        c = c.withLogging(Logging.format(), Logging.verbosity()); // kube-proxy copies the logging flags into the file's
        if (!c.featureGates().isEmpty()) {
            LOG.info("feature gates {}: none of them changes what nftproxy does", c.featureGates());
        }
        if (writeConfigTo != null) {
            Files.writeString(Path.of(writeConfigTo), ConfigWriter.yaml(c, hostname(c)));
            LOG.info("wrote the configuration to {}", writeConfigTo);
            return 0;
        }
        boolean iptables = c.mode().equals("iptables");
        if (cleanup) {
            return CleanupCommand.cleanupEverything(null, ProxyConfig.DEFAULT_TABLE);
        }
        Launch.checkBackend(iptables);
        // The privileged part of the start-up. After it (--init-only, in a privileged init container)
        // the long-running container, with NET_ADMIN only, finds everything set and writes nothing.
        ConntrackSysctls.apply(c.conntrack(), Path.of("/proc/sys"), Path.of("/sys"), ConntrackSysctls.inHostNamespace());
        if (initOnly) {
            return 0;
        }
        Launch.Builder launch = Launch.builder();
        String kc = master == null && c.clientConnection().kubeconfig().isEmpty() ? null : c.clientConnection().kubeconfig();
        if (kc == null && master == null) {
            launch.inCluster(true); // kube-proxy: neither a kubeconfig nor --master means the service account
        } else {
            launch.kubeconfig(kc == null || kc.isEmpty() ? null : Path.of(kc)).master(master);
        }
        launch.cfg(ProxyConfig.builder(hostname(c))
                .nodeIPs(RunCommand.bindAddressIPs(c.bindAddress()))
                .clusterCIDRs(RunCommand.cidrs(c.clusterCIDRs(), config != null ? "clusterCIDR" : "--cluster-cidr"))
                .nodePortAddresses(RunCommand.nodePortCidrs(c.nodePortAddresses(),
                        config != null ? "nodePortAddresses" : "--nodeport-addresses"))
                .masqueradeAll(c.sync().masqueradeAll())
                .masqueradeBit(c.sync().masqueradeBit())
                .minSyncPeriod(c.sync().minSyncPeriod())
                .syncPeriod(c.sync().syncPeriod())
                .localDetection(LocalDetection.parse(c.detectLocalMode(), c.bridgeInterface(), c.interfaceNamePrefix()))
                .serviceCounters(serviceCounters && !iptables)
                .endpointCounters(endpointCounters && !iptables)
                .bindHardFail(c.bindAddressHardFail())
                .build())
                .iptables(iptables)
                .proxyName(c.serviceProxyName().isEmpty() ? null : c.serviceProxyName())
                .healthzAt(c.healthzBindAddress())
                .metricsAt(c.metricsBindAddress())
                .resync(c.configSyncPeriod())
                .zpages(ZPages.of("kube-proxy", Launch.flags(spec)))
                .apiQps(c.clientConnection().qps())
                .apiBurst(c.clientConnection().burst())
                .oomScoreAdj(c.oomScoreAdj());
        return launch.build().run();
    }

    /** kube-proxy's processHostnameOverrideFlag: the flag over the file, trimmed and lower-cased; else the host name. */
    private String hostname(KubeProxyConfiguration c) throws Exception {
        if (hostnameOverride != null) {
            if (hostnameOverride.isBlank()) {
                throw new IllegalArgumentException("--hostname-override: empty hostname-override is invalid");
            }
            return hostnameOverride.trim().toLowerCase(Locale.ROOT);
        }
        if (!c.hostnameOverride().isBlank()) {
            return c.hostnameOverride().trim().toLowerCase(Locale.ROOT);
        }
        return InetAddress.getLocalHost().getHostName().toLowerCase(Locale.ROOT);
    }

    /** Without --config: the flags given, as a KubeProxyConfiguration, read (defaulted, checked) as a file is. */
    private KubeProxyConfigReader.Read fromFlags() throws Exception {
        ObjectMapper json = new ObjectMapper();
        ObjectNode doc = json.createObjectNode();
        Map<String, String> labels = new LinkedHashMap<>();
        Map<String, Object> values = new LinkedHashMap<>();
        values.put("--kubeconfig", kubeconfig);
        values.put("--kube-api-content-type", contentType);
        values.put("--kube-api-qps", number("--kube-api-qps", qps, true));
        values.put("--kube-api-burst", number("--kube-api-burst", burst, false));
        values.put("--bind-address", bindAddress);
        values.put("--healthz-bind-address", healthzBindAddress);
        values.put("--metrics-bind-address", metricsBindAddress);
        values.put("--bind-address-hard-fail", bindAddressHardFail);
        values.put("--profiling", profiling);
        values.put("--show-hidden-metrics-for-version", showHidden);
        values.put("--proxy-mode", proxyMode);
        values.put("--iptables-masquerade-bit", number("--iptables-masquerade-bit", masqueradeBit, false));
        values.put("--masquerade-all", masqueradeAll);
        values.put("--iptables-localhost-nodeports", localhostNodePorts);
        values.put("--iptables-sync-period", syncPeriod);
        values.put("--iptables-min-sync-period", minSyncPeriod);
        values.put("--ipvs-sync-period", ipvsSyncPeriod);
        values.put("--ipvs-min-sync-period", ipvsMinSyncPeriod);
        values.put("--ipvs-scheduler", ipvsScheduler);
        values.put("--ipvs-exclude-cidrs", ipvsExcludeCidrs);
        values.put("--ipvs-strict-arp", ipvsStrictArp);
        values.put("--ipvs-tcp-timeout", ipvsTcpTimeout);
        values.put("--ipvs-tcpfin-timeout", ipvsTcpFinTimeout);
        values.put("--ipvs-udp-timeout", ipvsUdpTimeout);
        values.put("--detect-local-mode", detectLocalMode);
        values.put("--pod-bridge-interface", podBridgeInterface);
        values.put("--pod-interface-name-prefix", podInterfaceNamePrefix);
        values.put("--cluster-cidr", clusterCIDR);
        values.put("--nodeport-addresses", nodePortAddresses);
        values.put("--oom-score-adj", number("--oom-score-adj", oomScoreAdj, false));
        values.put("--conntrack-max-per-core", number("--conntrack-max-per-core", conntrackMaxPerCore, false));
        values.put("--conntrack-min", number("--conntrack-min", conntrackMin, false));
        values.put("--conntrack-tcp-timeout-established", conntrackEstablished);
        values.put("--conntrack-tcp-timeout-close-wait", conntrackCloseWait);
        values.put("--conntrack-tcp-be-liberal", conntrackBeLiberal);
        values.put("--conntrack-udp-timeout", conntrackUdpTimeout);
        values.put("--conntrack-udp-timeout-stream", conntrackUdpTimeoutStream);
        values.put("--config-sync-period", configSyncPeriod);
        if (featureGates != null) {
            Map<String, Boolean> gates = new LinkedHashMap<>();
            for (String g : featureGates) {
                String[] kv = g.split("=", 2);
                if (kv.length != 2 || !(kv[1].equalsIgnoreCase("true") || kv[1].equalsIgnoreCase("false"))) {
                    throw new IllegalArgumentException("--feature-gates: '" + g + "' is not NAME=true or NAME=false");
                }
                gates.put(kv[0].trim(), Boolean.parseBoolean(kv[1].trim()));
            }
            values.put("--feature-gates", gates);
        }
        // The deprecated port flags, as kube-proxy applies them without --config: 0 turns the server off.
        if (healthzPort != null) {
            values.put("--healthz-bind-address", healthzPort == 0 ? null
                    : hostOf(healthzBindAddress, "0.0.0.0") + ":" + healthzPort);
        }
        if (metricsPort != null) {
            values.put("--metrics-bind-address", metricsPort == 0 ? null
                    : hostOf(metricsBindAddress, "127.0.0.1") + ":" + metricsPort);
        }
        for (Map.Entry<String, Object> e : values.entrySet()) {
            if (e.getValue() == null) {
                continue;
            }
            for (String path : FIELD_FLAGS.get(e.getKey())) {
                labels.put(path, e.getKey());
                String[] parts = path.split("\\.");
                ObjectNode at = doc;
                for (int i = 0; i < parts.length - 1; i++) {
                    at = at.has(parts[i]) ? (ObjectNode) at.get(parts[i]) : at.putObject(parts[i]);
                }
                at.set(parts[parts.length - 1], json.valueToTree(e.getValue()));
            }
        }
        KubeProxyConfigReader.Read read = KubeProxyConfigReader.parse(json.writeValueAsString(doc), "the command line", labels);
        if ((healthzPort != null && healthzPort == 0) || (metricsPort != null && metricsPort == 0)) {
            KubeProxyConfiguration c = read.config();
            c = c.withBindAddresses(healthzPort != null && healthzPort == 0 ? "" : c.healthzBindAddress(),
                    metricsPort != null && metricsPort == 0 ? "" : c.metricsBindAddress());
            read = new KubeProxyConfigReader.Read(c, read.warnings(), read.notes());
        }
        return read;
    }

    private static String hostOf(String address, String otherwise) {
        if (address == null || address.isBlank()) {
            return otherwise;
        }
        int colon = address.lastIndexOf(':');
        return colon > 0 && !address.endsWith("]") ? address.substring(0, colon) : address;
    }

    /** A numeric flag's value, refused with the flag's name when it is not a number. */
    private static Object number(String flag, String value, boolean decimal) {
        if (value == null) {
            return null;
        }
        try {
            return decimal ? (Object) Double.parseDouble(value.trim()) : (Object) Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + ": '" + value + "' is not " + (decimal ? "a number" : "an integer"));
        }
    }

    /** The flags kube-proxy has that set a configuration field, for tests. */
    static List<String> fieldFlags() {
        return new ArrayList<>(FIELD_FLAGS.keySet());
    }
}
