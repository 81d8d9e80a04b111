package io.nftproxy.proxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.util.ContextInitializer;
import ch.qos.logback.core.joran.spi.JoranException;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.proxy.config.KubeProxyConfigReaderTestAccess;

/** The commands that need no kernel: {@code selftest} and {@code run --once --dry-run}. Run without root. */
public class DryRunCliTest {
    /** What one command line did. */
    public record Result(int exit, String out, String err) {
    }

    /** Runs the CLI in-process and captures what it prints (the kernel tests use it too). */
    public static synchronized Result cli(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = Main.execute(args);
            return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
            quietLogging();
        }
    }

    /** The command set up its own logging (to stderr); the tests' own goes back to its file (logback-test.xml). */
    public static void quietLogging() {
        LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
        ctx.reset();
        try {
            new ContextInitializer(ctx).autoConfig();
        } catch (JoranException e) {
            throw new IllegalStateException(e);
        }
    }

    /** shop/web at 10.96.0.10:80 with one endpoint, 10.244.1.2:8080; {@code spec} adds lines to its spec. */
    static String web(String spec) {
        return """
                apiVersion: v1
                kind: Service
                metadata: {name: web, namespace: shop}
                spec:
                  clusterIP: 10.96.0.10
                """ + spec + """
                  ports: [{name: http, port: 80, targetPort: 8080}]
                ---
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata: {name: web-1, namespace: shop, labels: {kubernetes.io/service-name: web}}
                addressType: IPv4
                ports: [{name: http, port: 8080}]
                endpoints: [{addresses: [10.244.1.2]}]
                """;
    }

    @Test
    void selftestRunsTheWholePathOnTheDemoManifests() {
        Result r = cli("selftest");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().startsWith("selftest: ok: 4 service ports -> "), r.out());
    }

    @Test
    void dryRunPrintsTheTransactionAndSkipsBadObjects(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("svc.yaml"), web("") + """
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: broken, namespace: shop}
                spec:
                  clusterIP: 10.96.0.11
                  ports: [{port: 99999}]
                """);
        Result r = cli("run", "--manifests", dir.toString(), "--once", "--dry-run", "--hostname-override", "node-a");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("add table ip nftproxy"), r.out());
        assertTrue(r.out().contains("10.96.0.10 . tcp . 80"), "the service's map element is printed by its types");
        assertTrue(r.out().contains("10.244.1.2"), "the endpoint is printed");
        assertTrue(r.out().contains("dry run: would sync "), r.out());
        assertTrue(r.err().contains("shop/broken"), "the bad service is named: " + r.err());
    }

    /** Issue 20's crash: a Node without a zone label and slices with zone hints (IptablesRendererTest has the other mode). */
    @Test
    void zoneHintsOnANodeWithoutAZoneLabelAreIgnored(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("node.yaml"), """
                apiVersion: v1
                kind: Node
                metadata: {name: node-a}
                status: {addresses: [{type: InternalIP, address: 192.168.50.2}]}
                """);
        Files.writeString(dir.resolve("svc.yaml"), web("").replace("endpoints: [{addresses: [10.244.1.2]}]\n", "endpoints:\n") + """
                - {addresses: [10.244.2.2], nodeName: node-b, zone: b, conditions: {ready: true}, hints: {forZones: [{name: b}]}}
                - {addresses: [10.244.3.2], nodeName: node-c, zone: c, conditions: {ready: true}, hints: {forZones: [{name: c}]}}
                """);
        Files.writeString(dir.resolve("other.yaml"), """
                apiVersion: v1
                kind: Service
                metadata: {name: other, namespace: shop}
                spec: {clusterIP: 10.96.0.99, ports: [{port: 81}]}
                """);
        Result r = cli("run", "--manifests", dir.toString(), "--once", "--dry-run", "--hostname-override", "node-a");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("10.244.2.2") && r.out().contains("10.244.3.2"),
                "the hints are ignored: both endpoints are used\n" + r.out());
        assertTrue(r.out().contains("10.96.0.99"), "the unrelated service is there too");
    }

    /**
     * What a cluster sends that the proxy does not use: v1 Endpoints and FQDN EndpointSlices are
     * ignored as kube-proxy ignores them, a misspelled field is dropped as the API server drops it;
     * at -v 2 each is named, at the default verbosity nothing is said.
     */
    @Test
    void unusedObjectsAndUnknownFieldsAreNamedAtVerbosityTwo(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("svc.yaml"), """
                apiVersion: v1
                kind: Service
                metadata: {name: web, namespace: shop}
                spec:
                  clusterIP: 10.96.0.77
                  ports: [{name: http, port: 80, protocl: UDP}]
                ---
                apiVersion: v1
                kind: Endpoints
                metadata: {name: web, namespace: shop}
                subsets: [{addresses: [{ip: 10.244.1.2}], ports: [{name: http, port: 8080}]}]
                ---
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata: {name: web-fqdn, namespace: shop, labels: {kubernetes.io/service-name: web}}
                addressType: FQDN
                endpoints: [{addresses: [db.example.com], conditions: {redy: true}}]
                ports: [{name: http, port: 8080}]
                """);
        Result quiet = cli("run", "--manifests", dir.toString(), "--once", "--dry-run", "--hostname-override", "node-a");
        assertEquals(0, quiet.exit(), quiet.err());
        assertTrue(quiet.out().contains("10.96.0.77 . tcp . 80"), "the service is programmed, TCP: " + quiet.out());
        assertFalse(quiet.err().contains("protocl") || quiet.err().contains("Endpoints shop/web"), quiet.err());

        Result v2 = cli("run", "--manifests", dir.toString(), "--once", "--dry-run", "--hostname-override", "node-a", "-v", "2");
        assertEquals(0, v2.exit(), v2.err());
        assertTrue(v2.err().contains("Service shop/web: unknown field spec.ports[0].protocl dropped, as the API server drops it"),
                v2.err());
        assertTrue(v2.err().contains("EndpointSlice shop/web-fqdn: unknown field endpoints[0].conditions.redy dropped"), v2.err());
        assertTrue(v2.err().contains("Endpoints shop/web: ignored: kube-proxy reads EndpointSlices, never v1 Endpoints"), v2.err());
        assertTrue(v2.err().contains("EndpointSlice shop/web-fqdn: addressType FQDN: not proxied"), v2.err());
    }

    /** ServiceCIDR objects in the directory give the service network; --service-cidr overrides them; a bad range is named. */
    @Test
    void serviceCidrObjectsInManifestsAndTheFlagOverThem(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("cidrs.yaml"), """
                apiVersion: networking.k8s.io/v1
                kind: ServiceCIDR
                metadata: {name: kubernetes}
                spec: {cidrs: [10.96.0.0/16, "fd00:96::/112", nonsense]}
                """);
        Files.writeString(dir.resolve("svc.yaml"), web(""));
        Result r = cli("run", "--manifests", dir.toString(), "--once", "--dry-run", "--hostname-override", "node-a");
        assertEquals(0, r.exit(), r.err());
        List<String> cidrLines = r.out().lines().filter(l -> l.contains("service-cidrs {")).toList();
        assertTrue(cidrLines.stream().anyMatch(l -> l.contains("ip nftproxy") && l.contains("10.96.0.0")), r.out());
        assertTrue(cidrLines.stream().anyMatch(l -> l.contains("ip6 nftproxy") && l.contains("fd00:96::")), r.out());
        assertTrue(r.err().contains("ServiceCIDR kubernetes: spec.cidrs: 'nonsense' is not a CIDR (skipped)"), r.err());

        Result flag = cli("run", "--manifests", dir.toString(), "--once", "--dry-run", "--hostname-override", "node-a",
                "--service-cidr", "10.100.0.0/16");
        assertEquals(0, flag.exit(), flag.err());
        List<String> flagLines = flag.out().lines().filter(l -> l.contains("service-cidrs {")).toList();
        assertTrue(flagLines.stream().anyMatch(l -> l.contains("10.100.0.0")), flag.out());
        assertTrue(flagLines.stream().noneMatch(l -> l.contains("10.96.0.0") || l.contains("fd00:96::")), flag.out());
    }

    /** Issue 19: kubeadm's config file is read as kube-proxy reads it (syncPeriod: 0s is the default), and its mode counts. */
    @Test
    void kubeadmsConfigFileRunsAndItsModeCounts(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("config.conf");
        Files.writeString(cfg, KubeProxyConfigReaderTestAccess.kubeadmConfig());
        Path manifests = Files.createDirectory(dir.resolve("m"));
        Files.writeString(manifests.resolve("svc.yaml"), web(""));
        Result r = cli("run", "--config", cfg.toString(), "--manifests", manifests.toString(), "--once", "--dry-run",
                "--hostname-override", "node-a");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("10.96.0.10 . tcp . 80"), r.out());
        assertTrue(r.err().contains("mode \"\" means nftables here"), r.err());
        Files.writeString(cfg, Files.readString(cfg).replace("mode: \"\"", "mode: iptables"));
        Result ipt = cli("run", "--config", cfg.toString(), "--manifests", manifests.toString(), "--once", "--dry-run",
                "--hostname-override", "node-a");
        assertEquals(2, ipt.exit(), "mode: iptables is honoured (and a dry run is nftables only): " + ipt.err());
        Files.writeString(cfg, Files.readString(cfg).replace("mode: iptables", "mode: ipvs"));
        Result ipvs = cli("run", "--config", cfg.toString(), "--manifests", manifests.toString(), "--once", "--dry-run",
                "--hostname-override", "node-a");
        assertEquals(1, ipvs.exit());
        assertTrue(ipvs.err().contains("mode ipvs is not supported"), ipvs.err());
    }

    @Test
    void dryRunNeedsOnce(@TempDir Path dir) {
        Result r = cli("run", "--manifests", dir.toString(), "--dry-run");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("--dry-run needs --once"), r.err());
    }

    @Test
    void jsonLogLinesAsKubernetesComponentsWriteThem(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("svc.yaml"), """
                apiVersion: v1
                kind: Service
                metadata: {name: "we\\"ird", namespace: shop}
                spec: {clusterIP: 10.96.0.10, ports: [{port: 99999}]}
                """);
        Result r;
        try {
            r = cli("run", "--manifests", dir.toString(), "--once", "--dry-run", "--hostname-override", "node-a",
                    "--logging-format", "json");
        } finally {
            Logging.format("text"); // back to text lines for the commands after it
            quietLogging();
        }
        assertEquals(0, r.exit(), r.err());
        ObjectMapper json = new ObjectMapper();
        boolean sawSync = false;
        for (String line : r.err().lines().filter(l -> l.startsWith("{")).toList()) {
            JsonNode n = json.readTree(line); // every line parses, quotes and all
            assertTrue(n.get("ts").isNumber() && n.get("msg").isTextual() && n.get("level").isTextual() && n.get("v").isInt(), line);
            if (n.get("msg").asText().startsWith("full sync")) {
                sawSync = true;
                assertEquals(true, n.get("full").asBoolean());
                assertEquals(0, n.get("servicePorts").asInt(), "the bad service is not programmed");
            }
        }
        assertTrue(sawSync, r.err());
        assertTrue(r.err().contains("shop/we\"ird"), "the bad service is named: " + r.err());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "--sync-period 0                        | --sync-period (syncPeriod) must be greater than 0",
        "--sync-period 9999999999h              | is out of range",
        "--min-sync-period 1m --sync-period 30s | must be greater than or equal to --min-sync-period",
        "--table ''                             | --table name is empty",
        "--table LONG                           | --table name longer than 255 bytes",
        "--config /no/such/file.yaml            | config file /no/such/file.yaml: no such file",
    })
    void badValuesAreRefusedAtStartNamingTheFlag(String flags, String message, @TempDir Path dir) {
        List<String> args = new ArrayList<>(List.of("run", "--manifests", dir.toString(), "--once",
                "--dry-run", "--hostname-override", "n"));
        for (String f : flags.split(" ")) {
            args.add(f.equals("''") ? "" : f.equals("LONG") ? "t".repeat(300) : f);
        }
        Result r = cli(args.toArray(new String[0]));
        assertEquals(1, r.exit(), r.err());
        assertTrue(r.err().contains(message), r.err());
    }

    @Test
    void serviceCountersDeclareCountingSetsAndNeedTheNftablesMode(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("svc.yaml"), web("  sessionAffinity: ClientIP\n"));
        Result r = cli("run", "--manifests", dir.toString(), "--once", "--dry-run", "--hostname-override", "n",
                "--service-counters");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("add set ip nftproxy service-ips { type ipv4_addr . inet_proto . inet_service; counter;"),
                r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("add map ip nftproxy service-endpoints-1-8 {") && !l.contains("counter;")),
                "service ports alone: the endpoint maps count nothing: " + r.out());
        assertTrue(r.out().contains("add element ip nftproxy sticky-ips-10800 { 10.96.0.10 . tcp . 80"), r.out());
        Result endpoints = cli("run", "--manifests", dir.toString(), "--once", "--dry-run", "--hostname-override", "n",
                "--endpoint-counters");
        assertEquals(0, endpoints.exit(), endpoints.err());
        assertTrue(endpoints.out().contains("add set ip nftproxy service-ips { type ipv4_addr . inet_proto . inet_service; counter;"),
                "--endpoint-counters counts service ports too: " + endpoints.out());
        assertTrue(endpoints.out().lines().anyMatch(l -> l.startsWith("add map ip nftproxy service-endpoints-1-8 {") && l.contains("counter;")),
                "the affinity service's endpoints count by index, as a plain service's: " + endpoints.out());
        Result plain = cli("run", "--manifests", dir.toString(), "--once", "--dry-run", "--hostname-override", "n");
        assertTrue(!plain.out().contains("counter") && !plain.out().contains("chain-endpoints"), "off by default: " + plain.out());

        Result ipt = cli("run", "--manifests", dir.toString(), "--once", "--mode", "iptables", "--service-counters");
        assertEquals(2, ipt.exit());
        assertTrue(ipt.err().contains("--service-counters needs --mode nftables"), ipt.err());
        Result iptEndpoints = cli("run", "--manifests", dir.toString(), "--once", "--mode", "iptables", "--endpoint-counters");
        assertEquals(2, iptEndpoints.exit());
        assertTrue(iptEndpoints.err().contains("--endpoint-counters needs --mode nftables"), iptEndpoints.err());
    }

    @Test
    void traceNamesWhatItCannotResolve(@TempDir Path dir) throws Exception {
        Result noModel = cli("trace", "--destination", "shop/web");
        assertEquals(2, noModel.exit());
        // No source, and no element of ours names it (no table here): where to look, said.
        assertTrue(noModel.err().contains("no service port of shop/web is in table nftproxy (give --manifests DIR or"
                + " --kubeconfig PATH"), noModel.err());
        Files.writeString(dir.resolve("svc.yaml"), """
                apiVersion: v1
                kind: Service
                metadata: {name: web, namespace: shop}
                spec: {clusterIP: 10.96.0.10, ports: [{name: http, port: 80}]}
                """);
        Result wrongPort = cli("trace", "--manifests", dir.toString(), "--hostname-override", "n", "--destination", "shop/web",
                "--port", "81");
        assertEquals(2, wrongPort.exit());
        assertTrue(wrongPort.err().contains("no service port of shop/web matches"), wrongPort.err());
    }
}
