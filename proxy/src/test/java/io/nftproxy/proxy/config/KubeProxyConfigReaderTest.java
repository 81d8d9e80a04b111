package io.nftproxy.proxy.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The KubeProxyConfiguration reader against kube-proxy's own: kubeadm's file, every field, wrong types, defaults. */
class KubeProxyConfigReaderTest {
    static String resource(String name) throws IOException {
        try (InputStream in = KubeProxyConfigReaderTest.class.getResourceAsStream("/kubeadm/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static KubeProxyConfigReader.Read parse(String yaml) {
        return KubeProxyConfigReader.parse(yaml, "config file F", Map.of());
    }

    /** The fields of the newest KubeProxyConfiguration v1alpha1 (kube-proxy 1.32 to 1.37, staging types.go). */
    static final List<String> UPSTREAM = List.of("apiVersion", "kind", "featureGates", "clientConnection.kubeconfig",
            "clientConnection.acceptContentTypes", "clientConnection.contentType", "clientConnection.qps", "clientConnection.burst",
            "logging.format", "logging.flushFrequency", "logging.verbosity", "logging.vmodule", "logging.options",
            "hostnameOverride", "bindAddress", "healthzBindAddress", "metricsBindAddress", "bindAddressHardFail", "enableProfiling",
            "showHiddenMetricsForVersion", "mode", "iptables.masqueradeBit", "iptables.masqueradeAll",
            "iptables.localhostNodePorts", "iptables.syncPeriod", "iptables.minSyncPeriod", "ipvs.syncPeriod", "ipvs.minSyncPeriod",
            "ipvs.scheduler", "ipvs.excludeCIDRs", "ipvs.strictARP", "ipvs.tcpTimeout", "ipvs.tcpFinTimeout", "ipvs.udpTimeout",
            "nftables.masqueradeBit", "nftables.masqueradeAll", "nftables.syncPeriod", "nftables.minSyncPeriod",
            "winkernel.networkName", "winkernel.sourceVip", "winkernel.enableDSR", "winkernel.rootHnsEndpointName",
            "winkernel.forwardHealthCheckVip", "detectLocalMode", "detectLocal.bridgeInterface", "detectLocal.interfaceNamePrefix",
            "clusterCIDR", "nodePortAddresses", "oomScoreAdj", "conntrack.maxPerCore", "conntrack.min",
            "conntrack.tcpEstablishedTimeout", "conntrack.tcpCloseWaitTimeout", "conntrack.tcpBeLiberal", "conntrack.udpTimeout",
            "conntrack.udpStreamTimeout", "configSyncPeriod", "portRange", "windowsRunAsService");

    @Test
    void everyUpstreamFieldIsKnownAndNothingElseButOurOwn() {
        Set<String> ours = new TreeSet<>(KubeProxyConfigReader.FIELDS.keySet());
        ours.removeAll(UPSTREAM);
        assertEquals(Set.of("serviceProxyName"), ours, "nftproxy's own fields");
        assertTrue(KubeProxyConfigReader.FIELDS.keySet().containsAll(UPSTREAM));
    }

    @Test
    void kubeadmsRenderedFileMeansKubeProxysDefaults() throws IOException {
        KubeProxyConfigReader.Read r = parse(resource("config.conf"));
        assertEquals(List.of(), r.warnings(), "kubeadm's zero values ask for nothing that does not apply");
        assertEquals(List.of("config file F: mode \"\" means nftables here (kube-proxy's own default is iptables)"), r.notes());
        KubeProxyConfiguration c = r.config();
        assertEquals("nftables", c.mode());
        assertEquals(new KubeProxyConfiguration.Sync(false, 14, Duration.ofSeconds(30), Duration.ofSeconds(1)), c.sync());
        assertEquals("0.0.0.0:10256", c.healthzBindAddress());
        assertEquals("127.0.0.1:10249", c.metricsBindAddress());
        assertEquals(List.of("10.244.0.0/16"), c.clusterCIDRs());
        assertEquals(List.of(), c.nodePortAddresses(), "primary, nftables mode's default");
        assertEquals("ClusterCIDR", c.detectLocalMode());
        assertEquals(-999, c.oomScoreAdj());
        assertEquals(Duration.ofMinutes(15), c.configSyncPeriod());
        assertEquals(new KubeProxyConfiguration.Conntrack(32768, 131072, Duration.ofHours(24), Duration.ofHours(1), false,
                Duration.ZERO, Duration.ZERO), c.conntrack());
        assertEquals(new KubeProxyConfiguration.ClientConnection("/var/lib/kube-proxy/kubeconfig.conf",
                "application/vnd.kubernetes.protobuf", "", 5f, 10), c.clientConnection());
        assertEquals("text", c.loggingFormat());
        assertEquals(KubeProxyConfiguration.defaults().sync(), c.sync(), "the same as no file at all");
    }

    @Test
    void everyFieldSetIsReadAndWhatDoesNotApplyIsNamed() {
        KubeProxyConfigReader.Read r = parse("""
                apiVersion: kubeproxy.config.k8s.io/v1alpha1
                kind: KubeProxyConfiguration
                featureGates: {NFTablesProxyMode: true}
                clientConnection: {kubeconfig: /k, acceptContentTypes: "application/json", contentType: application/json, qps: 20.5, burst: 40}
                logging: {format: json, verbosity: 3, flushFrequency: 5s, vmodule: [{filePattern: x, verbosity: 4}], options: {json: {infoBufferSize: "0"}}}
                hostnameOverride: " Node-A "
                bindAddress: 192.168.50.2
                healthzBindAddress: 192.168.50.2
                metricsBindAddress: 0.0.0.0:9999
                bindAddressHardFail: true
                enableProfiling: true
                showHiddenMetricsForVersion: "1.34"
                mode: nftables
                iptables: {masqueradeBit: 15, masqueradeAll: true, localhostNodePorts: true, syncPeriod: 20s, minSyncPeriod: 2s}
                ipvs: {syncPeriod: 1s, minSyncPeriod: 1s, scheduler: rr, excludeCIDRs: [10.0.0.0/8], strictARP: true, tcpTimeout: 1s, tcpFinTimeout: 1s, udpTimeout: 1s}
                nftables: {masqueradeBit: 13, masqueradeAll: true, syncPeriod: 1m30s, minSyncPeriod: 500ms}
                winkernel: {networkName: n, sourceVip: v, enableDSR: true, rootHnsEndpointName: r, forwardHealthCheckVip: true}
                detectLocalMode: InterfaceNamePrefix
                detectLocal: {bridgeInterface: cbr0, interfaceNamePrefix: veth}
                clusterCIDR: 10.244.0.0/16,fd00:244::/64
                nodePortAddresses: [192.168.50.0/24]
                oomScoreAdj: -500
                conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 30m, tcpBeLiberal: true, udpTimeout: 45s, udpStreamTimeout: 3m}
                configSyncPeriod: 5m
                portRange: 30000-32767
                windowsRunAsService: true
                """);
        KubeProxyConfiguration c = r.config();
        assertEquals(new KubeProxyConfiguration.Sync(true, 13, Duration.ofSeconds(90), Duration.ofMillis(500)), c.sync());
        assertEquals(" Node-A ", c.hostnameOverride(), "trimmed and lower-cased where it is used, as kube-proxy does");
        assertEquals("192.168.50.2:10256", c.healthzBindAddress(), "the port is added, as kube-proxy adds it");
        assertEquals("0.0.0.0:9999", c.metricsBindAddress());
        assertTrue(c.bindAddressHardFail());
        assertEquals(List.of("10.244.0.0/16", "fd00:244::/64"), c.clusterCIDRs());
        assertEquals(new KubeProxyConfiguration.Conntrack(0, 0, Duration.ZERO, Duration.ofMinutes(30), true,
                Duration.ofSeconds(45), Duration.ofMinutes(3)), c.conntrack(), "an explicit 0 leaves a setting alone");
        assertEquals(new KubeProxyConfiguration.ClientConnection("/k", "application/json", "application/json", 20.5f, 40),
                c.clientConnection());
        assertEquals("json", c.loggingFormat());
        assertEquals(3, c.verbosity());
        assertEquals(Map.of("NFTablesProxyMode", true), c.featureGates());
        assertEquals(-500, c.oomScoreAdj());
        assertEquals(Duration.ofMinutes(5), c.configSyncPeriod());
        Set<String> named = new TreeSet<>();
        r.warnings().forEach(w -> named.add(w.substring("config file F: ".length(), w.indexOf(' ', "config file F: ".length()))));
        assertEquals(new TreeSet<>(List.of("clientConnection.acceptContentTypes", "enableProfiling", "showHiddenMetricsForVersion",
                "logging.vmodule", "iptables.localhostNodePorts", "iptables.masqueradeAll", "iptables.masqueradeBit",
                "iptables.syncPeriod", "iptables.minSyncPeriod", "ipvs.syncPeriod", "ipvs.minSyncPeriod", "ipvs.scheduler",
                "ipvs.excludeCIDRs", "ipvs.strictARP", "ipvs.tcpTimeout", "ipvs.tcpFinTimeout", "ipvs.udpTimeout",
                "winkernel.networkName", "winkernel.sourceVip", "winkernel.enableDSR", "winkernel.rootHnsEndpointName",
                "winkernel.forwardHealthCheckVip", "portRange", "windowsRunAsService")), named, String.join("\n", r.warnings()));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "'conntrack: {maxPerCore: \"32768\"}'|config file F: conntrack.maxPerCore: expected an integer, not \"32768\"",
        "'nftables: {syncPeriod: 30}'|config file F: nftables.syncPeriod: expected a duration such as 30s, 1m30s or 24h0m0s, not 30",
        "'nftables: {syncPeriod: 30x}'|config file F: nftables.syncPeriod: expected a duration such as 30s, 1m30s or 24h0m0s, not \"30x\"",
        "'masqueradeAll: yes-please'|",
        "'bindAddressHardFail: \"true\"'|config file F: bindAddressHardFail: expected true or false, not \"true\"",
        "'nodePortAddresses: 10.0.0.0/8'|config file F: nodePortAddresses: expected a list of strings, not \"10.0.0.0/8\"",
        "'featureGates: {A: 1}'|config file F: featureGates: expected a mapping of names to true or false, not {\"A\":1}",
        "'conntrack: 5'|config file F: conntrack: expected a mapping, not 5",
        "'mode: ipvs'|config file F: mode ipvs is not supported: nftproxy runs nftables (or iptables, as the reference)",
        "'mode: kernelspace'|config file F: mode kernelspace is not supported: nftproxy runs nftables (or iptables, as the reference)",
        "'mode: nftable'|config file F: unknown mode 'nftable' (expected nftables or iptables)",
        "'nftables: {masqueradeBit: 32}'|config file F: nftables.masqueradeBit must be in [0, 31], not 32",
        "'nftables: {syncPeriod: 1s, minSyncPeriod: 2s}'|config file F: nftables.minSyncPeriod must be less than or equal to nftables.syncPeriod",
        "'oomScoreAdj: 1001'|config file F: oomScoreAdj must be in [-1000, 1000], not 1001",
        "'conntrack: {min: -1}'|config file F: conntrack.min must be greater than or equal to 0",
        "'conntrack: {udpTimeout: -1s}'|config file F: conntrack.udpTimeout must be greater than or equal to 0",
        "'clusterCIDR: 10.0.0.0/8,fd00::/64,10.1.0.0/16'|config file F: clusterCIDR at most two CIDRs (one per IP family), not 3",
        "'kind: KubeletConfiguration'|config file F is a KubeletConfiguration, not a KubeProxyConfiguration",
        "'apiVersion: kubeproxy.config.k8s.io/v1beta1'|config file F: apiVersion kubeproxy.config.k8s.io/v1beta1 is not kubeproxy.config.k8s.io/v1alpha1",
        "'logging: {format: xml}'|config file F: logging.format expected text or json, not 'xml'",
        "'[1, 2]'|config file F is not a KubeProxyConfiguration (not a mapping)",
    })
    void wrongValuesAreErrorsNamingTheFileAndField(String yaml, String error) {
        if (error == null) {
            // masqueradeAll at the top level is no field of v1alpha1: unknown, a warning, not an error
            KubeProxyConfigReader.Read r = parse(yaml);
            assertEquals(List.of("config file F: unknown field masqueradeAll (ignored)"), r.warnings());
            return;
        }
        KubeProxyConfigReader.InvalidConfigException e = assertThrows(KubeProxyConfigReader.InvalidConfigException.class,
                () -> parse(yaml));
        assertEquals(error, e.getMessage());
    }

    @Test
    void unknownFieldsAndMisplacedSettingsAreWarnings() {
        KubeProxyConfigReader.Read r = parse("""
                mode: iptables
                conntrak: {min: 1}
                iptables: {syncPeriod: 10s, masqueradeBit: 12, extra: 1}
                nftables: {syncPeriod: 20s}
                """);
        assertEquals(List.of("config file F: unknown field conntrak (ignored)", "config file F: unknown field iptables.extra (ignored)",
                "config file F: nftables.syncPeriod is ignored in iptables mode (iptables.syncPeriod applies)"), r.warnings());
        assertEquals(Duration.ofSeconds(10), r.config().sync().syncPeriod());
        assertEquals(12, r.config().sync().masqueradeBit());
        assertEquals(List.of(), r.notes(), "mode given: nothing to say about it");
    }

    @Test
    void anEmptyFileAndAnEmptyDocumentAreTheDefaults() {
        assertEquals(KubeProxyConfiguration.defaults(), parse("").config());
        assertEquals(KubeProxyConfiguration.defaults(), parse("---\n").config());
        assertEquals(KubeProxyConfiguration.defaults(), parse("{}").config());
    }

    @ParameterizedTest
    @CsvSource({"'', 0.0.0.0:10256, 127.0.0.1:10249", "::, [::]:10256, [::1]:10249", "0.0.0.0, 0.0.0.0:10256, 127.0.0.1:10249"})
    void bindAddressesFollowTheFamilyOfBindAddress(String bind, String healthz, String metrics) {
        KubeProxyConfiguration c = parse(bind.isEmpty() ? "" : "bindAddress: \"" + bind + "\"").config();
        assertEquals(healthz, c.healthzBindAddress());
        assertEquals(metrics, c.metricsBindAddress());
    }
}
