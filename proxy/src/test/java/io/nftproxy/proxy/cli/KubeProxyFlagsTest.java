package io.nftproxy.proxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.proxy.config.KubeProxyConfigReader;
import io.nftproxy.proxy.config.KubeProxyConfigReaderTestAccess;
import io.nftproxy.proxy.config.KubeProxyConfiguration;
import picocli.CommandLine;

/** kube-proxy's command line, as nftproxy's image answers it. Run without root (through --write-config-to). */
class KubeProxyFlagsTest {
    @TempDir
    Path dir;

    /** Every flag of kube-proxy's cmd/kube-proxy/app/options.go (newest) with a value it accepts, and the logging flags. */
    static final List<String> KUBE_PROXY_FLAGS = List.of("--config=f", "--write-config-to=f", "--cleanup", "--init-only",
            "--feature-gates=A=true", "--kubeconfig=k", "--master=https://m", "--kube-api-content-type=application/json",
            "--kube-api-burst=10", "--kube-api-qps=5", "--hostname-override=n", "--bind-address=0.0.0.0",
            "--healthz-bind-address=0.0.0.0:10256", "--metrics-bind-address=127.0.0.1:10249", "--bind-address-hard-fail",
            "--profiling", "--show-hidden-metrics-for-version=1.34", "--proxy-mode=nftables", "--iptables-masquerade-bit=14",
            "--masquerade-all", "--iptables-localhost-nodeports=false", "--iptables-sync-period=30s", "--iptables-min-sync-period=1s",
            "--ipvs-sync-period=30s", "--ipvs-min-sync-period=1s", "--ipvs-scheduler=rr", "--ipvs-exclude-cidrs=10.0.0.0/8",
            "--ipvs-strict-arp", "--ipvs-tcp-timeout=0s", "--ipvs-tcpfin-timeout=0s", "--ipvs-udp-timeout=0s",
            "--detect-local-mode=ClusterCIDR", "--pod-bridge-interface=cbr0", "--pod-interface-name-prefix=veth",
            "--cluster-cidr=10.244.0.0/16", "--nodeport-addresses=primary", "--oom-score-adj=-999", "--conntrack-max-per-core=32768",
            "--conntrack-min=131072", "--conntrack-tcp-timeout-established=24h0m0s", "--conntrack-tcp-timeout-close-wait=1h0m0s",
            "--conntrack-tcp-be-liberal", "--conntrack-udp-timeout=0s", "--conntrack-udp-timeout-stream=0s",
            "--config-sync-period=15m0s", "--healthz-port=10256", "--metrics-port=10249", "--v=2", "-v=2", "--vmodule=x=2",
            "--logging-format=text", "--log-flush-frequency=5s", "--log-json-split-stream", "--log-json-info-buffer-size=0",
            "--log-text-split-stream", "--log-text-info-buffer-size=0", "--version", "--windows-service", "--source-vip=1.2.3.4",
            "--network-name=n", "--enable-dsr", "--root-hnsendpoint-name=r", "--forward-healthcheck-vip");

    @Test
    void everyFlagOfKubeProxyParses() {
        for (String flag : KUBE_PROXY_FLAGS) {
            CommandLine cl = new CommandLine(new Main());
            cl.parseArgs("kube-proxy", flag); // throws on a flag it does not know or a value it cannot take
        }
        assertTrue(KubeProxyCommand.fieldFlags().stream().allMatch(f -> KUBE_PROXY_FLAGS.stream().anyMatch(k -> k.startsWith(f + "="))
                || KUBE_PROXY_FLAGS.contains(f)), "every field flag is in the table");
    }

    static KubeProxyConfiguration written(Path out) throws Exception {
        KubeProxyConfigReader.Read r = KubeProxyConfigReader.read(out);
        return r.config();
    }

    @Test
    void withoutConfigTheFlagsSetTheConfiguration(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("written.yaml");
        DryRunCliTest.Result r = DryRunCliTest.cli("kube-proxy", "--write-config-to=" + out, "--proxy-mode=iptables",
                "--iptables-sync-period=10s", "--iptables-min-sync-period", "2s", "--masquerade-all", "--iptables-masquerade-bit=12",
                "--cluster-cidr=10.244.0.0/16,fd00:244::/64", "--conntrack-max-per-core=0", "--conntrack-tcp-be-liberal=true",
                "--conntrack-udp-timeout=45s", "--hostname-override= Node-A ", "--healthz-port=0", "--metrics-bind-address=0.0.0.0:9999",
                "--kubeconfig=/var/lib/kube-proxy/kubeconfig.conf", "--config-sync-period=5m", "--oom-score-adj=-500",
                "--nodeport-addresses=192.168.50.0/24", "--feature-gates=A=true,B=false", "--kube-api-qps=20", "--kube-api-burst=30");
        assertEquals(0, r.exit(), r.err());
        KubeProxyConfiguration c = written(out);
        assertEquals("iptables", c.mode());
        assertEquals(new KubeProxyConfiguration.Sync(true, 12, Duration.ofSeconds(10), Duration.ofSeconds(2)), c.sync());
        assertEquals(List.of("10.244.0.0/16", "fd00:244::/64"), c.clusterCIDRs());
        assertEquals(0, c.conntrack().maxPerCore());
        assertTrue(c.conntrack().tcpBeLiberal());
        assertEquals(Duration.ofSeconds(45), c.conntrack().udpTimeout());
        assertEquals("node-a", c.hostnameOverride(), "trimmed and lower-cased, as kube-proxy does");
        assertEquals("0.0.0.0:9999", c.metricsBindAddress());
        assertEquals("/var/lib/kube-proxy/kubeconfig.conf", c.clientConnection().kubeconfig());
        assertEquals(20f, c.clientConnection().qps());
        assertEquals(30, c.clientConnection().burst());
        assertEquals(Duration.ofMinutes(5), c.configSyncPeriod());
        assertEquals(-500, c.oomScoreAdj());
        assertEquals(List.of("192.168.50.0/24"), c.nodePortAddresses());
        assertEquals(Map.of("A", true, "B", false), c.featureGates());
        String text = Files.readString(out);
        assertTrue(text.contains("healthzBindAddress: \"\"") || text.contains("healthzBindAddress: ''"),
                "--healthz-port=0 turns the health server off:\n" + text);
    }

    @Test
    void withConfigOnlyTheHostnameAndLoggingFlagsApplyAndTheRestIsNamed(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("config.conf");
        Files.writeString(cfg, KubeProxyConfigReaderTestAccess.kubeadmConfig());
        Path out = dir.resolve("written.yaml");
        DryRunCliTest.Result r = DryRunCliTest.cli("kube-proxy", "--config=" + cfg, "--hostname-override=node-b",
                "--write-config-to=" + out, "--proxy-mode=iptables", "--masquerade-all", "--v=2");
        assertEquals(0, r.exit(), r.err());
        KubeProxyConfiguration c = written(out);
        assertEquals("nftables", c.mode(), "the file's mode, not the flag's");
        assertEquals(false, c.sync().masqueradeAll());
        assertEquals("node-b", c.hostnameOverride(), "--hostname-override applies over the file");
        assertEquals(2, c.verbosity(), "logging flags apply over the file");
        assertTrue(r.err().contains("--proxy-mode is ignored because --config is given (as kube-proxy ignores it): set mode in "
                + cfg), r.err());
        assertTrue(r.err().contains("--masquerade-all is ignored because --config is given"), r.err());
        assertTrue(r.err().contains("mode \"\" means nftables here"), r.err());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "--proxy-mode=ipvs|nftproxy: --proxy-mode ipvs is not supported: nftproxy runs nftables (or iptables, as the reference);"
                + " give --proxy-mode nftables or leave it out",
        "--windows-service|nftproxy: --windows-service is a Windows flag (kernelspace mode); nftproxy runs on Linux only",
        "--source-vip=1.2.3.4|nftproxy: --source-vip is a Windows flag (kernelspace mode); nftproxy runs on Linux only",
        "--conntrack-min=abc|nftproxy: --conntrack-min: 'abc' is not an integer",
        "--conntrack-min=-1|nftproxy: the command line: --conntrack-min must be greater than or equal to 0",
        "--iptables-sync-period=10|nftproxy: the command line: --iptables-sync-period: expected a duration such as 30s, 1m30s"
                + " or 24h0m0s, not \"10\"",
        "--feature-gates=A|nftproxy: --feature-gates: 'A' is not NAME=true or NAME=false",
        "--hostname-override= |nftproxy: --hostname-override: empty hostname-override is invalid",
        "--config=/nonexistent/config.conf|nftproxy: config file /nonexistent/config.conf: no such file",
    })
    void wrongFlagsAreOneLineNamingTheFlag(String flag, String error) {
        DryRunCliTest.Result r = DryRunCliTest.cli("kube-proxy", flag, "--write-config-to=" + dir.resolve("out"));
        assertEquals(1, r.exit(), r.err());
        assertEquals(error, r.err().lines().filter(l -> l.startsWith("nftproxy:")).findFirst().orElse(r.err()));
    }

    @Test
    void versionSaysWhichKubeProxyItFollows() {
        DryRunCliTest.Result r = DryRunCliTest.cli("kube-proxy", "--version");
        assertEquals(0, r.exit());
        assertTrue(r.out().startsWith("Kubernetes v1."), r.out());
    }

    @Test
    void iptablesMasqueradeBitOnlyCountsInIptablesMode(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("out");
        DryRunCliTest.Result r = DryRunCliTest.cli("kube-proxy", "--iptables-masquerade-bit=40", "--write-config-to=" + out);
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.err().contains("--iptables-masquerade-bit is ignored in nftables mode (nftables.masqueradeBit applies)"),
                r.err());
        DryRunCliTest.Result bad = DryRunCliTest.cli("kube-proxy", "--proxy-mode=iptables", "--iptables-masquerade-bit=40",
                "--write-config-to=" + out);
        assertEquals(1, bad.exit());
        assertTrue(bad.err().contains("nftproxy: the command line: --iptables-masquerade-bit must be in [0, 31], not 40"), bad.err());
    }

    @Test
    void serviceCountersIsNftproxysOwnFlagBesideKubeProxys() {
        CommandLine.ParseResult parsed = new CommandLine(new Main()).parseArgs("kube-proxy", "--config=/c", "--service-counters");
        assertTrue(((KubeProxyCommand) parsed.subcommand().commandSpec().userObject()).serviceCounters);
        CommandLine.ParseResult endpoints = new CommandLine(new Main()).parseArgs("kube-proxy", "--config=/c", "--endpoint-counters");
        assertTrue(((KubeProxyCommand) endpoints.subcommand().commandSpec().userObject()).endpointCounters);
    }
}
