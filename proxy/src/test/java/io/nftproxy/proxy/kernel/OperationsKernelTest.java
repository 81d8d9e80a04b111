package io.nftproxy.proxy.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.sandbox.Netns;
import io.nftproxy.proxy.server.ProxyServer;
import io.nftproxy.proxy.sync.Generation;
import io.nftproxy.proxy.source.ManifestSource;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncListener;

/**
 * The operator's view of a running proxy, over real HTTP: kube-proxy's metrics in the Prometheus
 * exposition format, /healthz and /livez, healthCheckNodePort servers inside the node's namespace,
 * and drift repair when someone else edits our table.
 */
class OperationsKernelTest {
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    static HttpResponse<String> get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(3)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static ProxyConfig config() {
        return ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse(Topology.NODE_IP)))
                .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).minSyncPeriod(Duration.ofMillis(50)).build();
    }

    /** Parses the Prometheus text format: series (name plus labels) to value. */
    static Map<String, Double> scrape(int port) throws Exception {
        HttpResponse<String> r = get("http://127.0.0.1:" + port + "/metrics");
        assertEquals(200, r.statusCode());
        Map<String, Double> out = new HashMap<>();
        Pattern line = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\\{[^}]*\\})?) ([-+0-9.eEInfNa]+)$");
        for (String l : r.body().split("\n")) {
            if (l.startsWith("#") || l.isBlank()) {
                continue;
            }
            Matcher m = line.matcher(l.trim());
            assertTrue(m.matches(), "exposition format: " + l);
            // simpleclient writes label sets with a trailing comma: {le="0.001",}
            out.put(m.group(1).replace(",}", "}"), Double.parseDouble(m.group(2)));
        }
        return out;
    }

    @Test
    void metricsHealthAndHealthCheckNodePorts(@TempDir Path dir) throws Exception {
        try (Topology topo = new Topology()) {
            topo.serve("10.244.1.2", 8080);
            String http = "[{name: http, port: 8080, protocol: TCP}]";
            new Manifests()
                    .service("local", "10.96.0.10", "[{name: http, port: 80, nodePort: 30080}]", "type: NodePort",
                            "externalTrafficPolicy: Local", "healthCheckNodePort: 32001")
                    .slice("local", "a", "IPv4", http, "10.244.1.2@node-a")
                    .service("remote", "10.96.0.11", "[{name: http, port: 80, nodePort: 30081}]", "type: NodePort",
                            "externalTrafficPolicy: Local", "healthCheckNodePort: 32002")
                    .slice("remote", "a", "IPv4", http, "10.244.1.3@node-b")
                    .write(dir, "services.yaml");
            ProxyConfig cfg = config();
            ObjectStore store = new ObjectStore("node-a");
            try (NftClient nft = NftClient.open(topo.node.ns()); ManifestSource src = new ManifestSource(dir, store);
                 ProxyServer server = new ProxyServer(cfg, store, nft, topo.node.ns(), new InetSocketAddress("127.0.0.1", 0),
                         new InetSocketAddress("127.0.0.1", 0), new SyncListener() { })) {
                String healthz = "http://127.0.0.1:" + server.healthPort() + "/healthz";
                src.start(true);
                server.start();
                Topology.eventually(Duration.ofSeconds(20), () -> get(healthz).statusCode() == 200, "healthy after the first sync");
                HttpResponse<String> h = get(healthz);
                assertTrue(h.body().matches("\\{\"lastUpdated\":\"[^\"]+\",\"currentTime\":\"[^\"]+\",\"nodeEligible\":true,\"healthy\":true,"
                        + "\"status\":\\{\"IPv4\":\\{\"lastUpdated\":\"[^\"]+\",\"healthy\":true},\"IPv6\":\\{\"lastUpdated\":\"[^\"]+\",\"healthy\":true}}}"),
                        h.body());
                assertEquals("application/json", h.headers().firstValue("Content-Type").orElse(""));
                assertEquals(200, get("http://127.0.0.1:" + server.healthPort() + "/livez").statusCode());

                // healthCheckNodePort: served in the node's namespace, reached from the external client
                Topology.eventually(Duration.ofSeconds(20), () -> curl(topo.ext, Topology.NODE_IP + ":32001").startsWith("200"),
                        "the service with a local endpoint answers 200");
                assertEquals("200 {\n\t\"service\": {\n\t\t\"namespace\": \"default\",\n\t\t\"name\": \"local\"\n\t},\n"
                        + "\t\"localEndpoints\": 1,\n\t\"serviceProxyHealthy\": true\n}", curl(topo.ext, Topology.NODE_IP + ":32001"));
                assertEquals("503 {\n\t\"service\": {\n\t\t\"namespace\": \"default\",\n\t\t\"name\": \"remote\"\n\t},\n"
                        + "\t\"localEndpoints\": 0,\n\t\"serviceProxyHealthy\": true\n}", curl(topo.ext, Topology.NODE_IP + ":32002"));
                // ... on the NodePort addresses only (the node's primary IPv4 here), as kube-proxy listens: not on loopback
                Throwable refused = assertThrows(Exception.class, () -> curl(topo.node, "127.0.0.1:32001"));
                while (refused.getCause() != null) {
                    refused = refused.getCause();
                }
                assertTrue(refused instanceof ConnectException, refused.toString());

                Map<String, Double> m = scrape(server.metricsPort());
                assertTrue(m.get("kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family=\"IPv4\"}") >= 1, m.keySet().toString());
                assertTrue(m.get("kubeproxy_sync_full_proxy_rules_duration_seconds_count{ip_family=\"IPv4\"}") >= 1);
                assertTrue(m.containsKey("kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family=\"IPv4\",le=\"0.001\"}"), "kube-proxy's first bucket");
                assertTrue(m.containsKey("kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family=\"IPv6\",le=\"16.384\"}"), "and its last");
                assertTrue(m.containsKey("kubeproxy_network_programming_duration_seconds_bucket{ip_family=\"IPv4\",le=\"300.0\"}"));
                assertTrue(m.get("kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family=\"IPv4\"}") > 1.7e9);
                assertEquals(2.0, m.get("kubeproxy_sync_proxy_rules_service_changes_total"));
                assertEquals(2.0, m.get("kubeproxy_sync_proxy_rules_endpoint_changes_total"));
                assertEquals(0.0, m.get("kubeproxy_sync_proxy_rules_endpoint_changes_pending"));
                assertEquals(1.0, m.get("kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family=\"IPv4\",traffic_policy=\"external\"}"),
                        "the remote-only Local service");
                assertEquals(0.0, m.get("kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family=\"IPv4\"}"));
                assertTrue(m.get("kubeproxy_proxy_healthz_total{code=\"200\"}") >= 1);
                assertTrue(m.get("nftproxy_owned_objects{kind=\"set_elements\"}") > 0);
                assertTrue(m.containsKey("jvm_memory_bytes_used{area=\"heap\"}"), "JVM metrics");
                String metricsAt = "http://127.0.0.1:" + server.metricsPort();
                assertEquals("nftables", get(metricsAt + "/proxyMode").body(), "kube-proxy's /proxyMode");
                assertTrue(get(metricsAt + "/configz").body().startsWith(
                        "{\"kubeproxy.config.k8s.io\":{\"mode\":\"nftables\",\"hostnameOverride\":\"node-a\",\"clusterCIDR\":\"10.244.0.0/16\""),
                        get(metricsAt + "/configz").body());

                // someone deletes one of our chains: the drift is seen and repaired, beside the table
                // in use (under the other generation's names), and the table then takes its own
                // names back
                topo.node.exec("nft", "flush", "chain", "ip", "nftproxy", "services");
                Topology.eventually(Duration.ofSeconds(20), () -> {
                    String table = topo.node.exec("nft", "list", "table", "ip", "nftproxy");
                    return !table.contains(Generation.SUFFIX) && topo.node.exec("nft", "list", "chain", "ip", "nftproxy",
                            "services").contains("@service-ips goto ip-pick-1-128");
                }, "our rules are back, under their own names");
                // Counted when the repair's sync returns, after the switch has put the rules back
                // and the old generation is deleted: polled, as the rules were.
                Topology.eventually(Duration.ofSeconds(20),
                        () -> scrape(server.metricsPort()).getOrDefault("nftproxy_drift_repairs_total", 0.0) >= 1,
                        "the repair is counted");
            }
        }
    }

    @Test
    void udpFlowsToAnEndpointThatLeftAreForgotten(@TempDir Path dir) throws Exception {
        try (Topology topo = new Topology()) {
            topo.serve("10.244.1.2", 5353);
            topo.serve("10.244.1.3", 5353);
            Netns client = topo.pod("10.244.2.100");
            String dns = "[{name: dns, port: 5353, protocol: UDP}]";
            new Manifests().service("dns", "10.96.0.10", "[{name: dns, port: 53, protocol: UDP}]")
                    .slice("dns", "a", "IPv4", dns, "10.244.1.2@node-b", "10.244.1.3@node-b").write(dir, "dns.yaml");
            try (Daemon d = Daemon.start(topo, dir, config(), null, null)) {
                Topology.eventually(Duration.ofSeconds(20), () -> topo.udp(client, "10.244.2.100", 40000, "10.96.0.10", 53)
                        .result() == Topology.Outcome.Result.ANSWERED, "the service answers");
                // Ten flows (one per client port), each pinned by conntrack to the endpoint it first reached.
                Map<Integer, String> pinned = new TreeMap<>();
                for (int port = 40000; port < 40010; port++) {
                    pinned.put(port, topo.udp(client, "10.244.2.100", port, "10.96.0.10", 53).answeredBy());
                }
                for (int i = 0; i < 3; i++) {
                    assertEquals(pinned.get(40000), topo.udp(client, "10.244.2.100", 40000, "10.96.0.10", 53).answeredBy(),
                            "one flow, one endpoint (conntrack)");
                }
                String departed = pinned.get(40000).split(":")[0];
                String kept = departed.equals("10.244.1.2") ? "10.244.1.3" : "10.244.1.2";
                long keptFlows = pinned.values().stream().filter(e -> e.startsWith(kept + ":")).count();
                // The endpoint leaves the service; its server keeps running, as a terminating pod's may.
                new Manifests().service("dns", "10.96.0.10", "[{name: dns, port: 53, protocol: UDP}]")
                        .slice("dns", "a", "IPv4", dns, kept + "@node-b").write(dir, "dns.yaml");
                Topology.eventually(Duration.ofSeconds(20), () -> (kept + ":5353").equals(
                        topo.udp(client, "10.244.2.100", 40000, "10.96.0.10", 53).answeredBy()),
                        "the retried flow now reaches the remaining endpoint");
                // Only port 40000 was retried: the other flows to the departed endpoint are gone because
                // the proxy deleted them, and the flows to the remaining endpoint were left alone. (A reply
                // the departed server sent after its flow was deleted may leave an entry of its own, from
                // that server to the client; that is not a service flow, so it is not asked about.)
                String toDeparted = topo.node.exec("conntrack", "-L", "-p", "udp", "--orig-dst", "10.96.0.10",
                        "--reply-src", departed);
                assertFalse(toDeparted.contains("dport=53 "), "conntrack -L has no service flow to " + departed + ": " + toDeparted);
                String toKept = topo.node.exec("conntrack", "-L", "-p", "udp", "--orig-dst", "10.96.0.10", "--reply-src", kept);
                assertEquals(keptFlows + 1, toKept.lines().filter(l -> l.contains("dport=53 ")).count(),
                        "the flows to " + kept + " plus the retried one: " + toKept);

                // The last endpoint leaves too (kubernetes PR 139629): a service without endpoints keeps no flow.
                new Manifests().service("dns", "10.96.0.10", "[{name: dns, port: 53, protocol: UDP}]").write(dir, "dns.yaml");
                Topology.eventually(Duration.ofSeconds(20), () -> topo.node.exec("conntrack", "-L", "-p", "udp", "--orig-dst",
                        "10.96.0.10").lines().noneMatch(l -> l.contains("dport=53 ")), "no flow of the service stays");
            }
        }
    }

    @Test
    void aUdpFlowThatBeganBeforeTheServiceHadEndpointsIsNatedOnceItHasThem(@TempDir Path dir) throws Exception {
        try (Topology topo = new Topology()) {
            topo.serve("10.244.1.2", 5353);
            Netns client = topo.pod("10.244.2.100");
            String dns = "[{name: dns, port: 5353, protocol: UDP}]";
            new Manifests().service("dns", "10.96.0.10", "[{name: dns, port: 53, protocol: UDP}]").write(dir, "dns.yaml");
            try (Daemon d = Daemon.start(topo, dir, config(), null, null)) {
                Topology.eventually(Duration.ofSeconds(20), () -> topo.udp(client, "10.244.2.100", 40001, "10.96.0.10", 53)
                        .result() == Topology.Outcome.Result.REFUSED, "no endpoints yet: rejected");
                // The client retries on the same flow; conntrack remembers it un-NATed.
                new Manifests().service("dns", "10.96.0.10", "[{name: dns, port: 53, protocol: UDP}]")
                        .slice("dns", "a", "IPv4", dns, "10.244.1.2@node-b").write(dir, "dns.yaml");
                Topology.eventually(Duration.ofSeconds(20), () -> "10.244.1.2:5353".equals(
                        topo.udp(client, "10.244.2.100", 40001, "10.96.0.10", 53).answeredBy()),
                        "the same flow reaches the endpoint once the service has one");
            }
        }
    }

    /** An HTTP GET from inside a namespace: "status body". */
    static String curl(Netns from, String hostPort) throws Exception {
        return from.ns().call(() -> {
            try (Socket s = new Socket()) {
                String[] hp = hostPort.split(":");
                s.connect(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])), 2000);
                s.setSoTimeout(3000);
                s.getOutputStream().write(("GET / HTTP/1.0\r\nHost: " + hostPort + "\r\n\r\n").getBytes());
                String resp = new String(s.getInputStream().readAllBytes());
                String status = resp.split(" ")[1];
                return status + " " + resp.substring(resp.indexOf("\r\n\r\n") + 4);
            }
        });
    }
}
