package io.nftproxy.proxy.kernel;

import static io.nftproxy.proxy.kernel.OperationsKernelTest.config;
import static io.nftproxy.proxy.kernel.OperationsKernelTest.scrape;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.ANSWERED;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.REFUSED;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.proxy.render.CountedSets;
import io.nftproxy.proxy.render.TableNames;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.counters.CounterSeries;
import io.nftproxy.proxy.counters.ServiceCounters;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.Syncer;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.sandbox.Netns;
import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.proxy.server.ProxyServer;
import io.nftproxy.proxy.source.ManifestSource;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.proxy.sync.SyncResult;

/**
 * --endpoint-counters and --service-counters with real connections: what the kernel counted in
 * our map elements is what /metrics reports, per service port, per endpoint and refused, and it
 * does not go backwards when a sync re-creates the elements; read by dump or by key alike.
 */
class ServiceCountersKernelTest {
    private static final String HTTP = "[{name: http, port: 8080, protocol: TCP}]";
    private static final ServicePortName WEB = new ServicePortName("default", "web", "http", Protocol.TCP);

    private static String series(String name, String service, String extra) {
        return name + "{namespace=\"default\",service=\"" + service + "\",port=\"http\",protocol=\"tcp\"" + extra + "}";
    }

    private static double value(Map<String, Double> m, String key) {
        return m.getOrDefault(key, -1.0);
    }

    @Test
    void connectionsAreCountedPerServicePortEndpointAndRefusal(@TempDir Path dir) throws Exception {
        try (Topology topo = new Topology()) {
            topo.serve("10.244.1.2", 8080);
            topo.serve("10.244.1.3", 8080);
            Netns client = topo.pod("10.244.2.100");
            Manifests m = new Manifests()
                    .service("web", "10.96.0.10", "[{name: http, port: 80}]")
                    .slice("web", "a", "IPv4", HTTP, "10.244.1.2@node-b", "10.244.1.3@node-b")
                    .service("sticky", "10.96.0.12", "[{name: http, port: 80}]", "sessionAffinity: ClientIP")
                    .slice("sticky", "a", "IPv4", HTTP, "10.244.1.3@node-b")
                    .service("empty", "10.96.0.11", "[{name: http, port: 80}]")
                    .service("local", "10.96.0.13", "[{name: http, port: 80, nodePort: 30083}]", "type: NodePort",
                            "externalTrafficPolicy: Local")
                    .slice("local", "a", "IPv4", HTTP, "10.244.1.2@node-b");
            m.write(dir, "services.yaml");
            ObjectStore store = new ObjectStore("node-a");
            AtomicReference<ProxyState> synced = new AtomicReference<>();
            try (NftClient nft = NftClient.open(topo.node.ns()); ManifestSource src = new ManifestSource(dir, store);
                 ProxyServer server = new ProxyServer(config().withEndpointCounters(true), store, nft, topo.node.ns(),
                         new InetSocketAddress("127.0.0.1", 0), null, new SyncListener() {
                             @Override
                             public void synced(SyncResult r, long nanos, ObjectStore.Snapshot snap) {
                                 synced.set(snap.state());
                             }
                         })) {
                src.start(true);
                server.start();
                Sandbox.eventually(Duration.ofSeconds(20), () ->
                        topo.tcp(client, "10.244.2.100", "10.96.0.10", 80).result() == ANSWERED, "web answers");
                // The connection that found web up is counted too: start from what the counters say now.
                Map<String, Double> before = scrape(server.metricsPort());
                String web = series("nftproxy_service_connections_total", "web", "");
                double web0 = value(before, web);
                assertTrue(web0 >= 1, "the first connection counted: " + before);

                Map<String, Integer> answered = new HashMap<>();
                for (int i = 0; i < 20; i++) {
                    Sandbox.Outcome o = topo.tcp(client, "10.244.2.100", "10.96.0.10", 80);
                    assertEquals(ANSWERED, o.result());
                    answered.merge(o.answeredBy(), 1, Integer::sum);
                }
                for (int i = 0; i < 3; i++) {
                    assertEquals("10.244.1.3:8080", topo.tcp(client, "10.244.2.100", "10.96.0.12", 80).answeredBy());
                }
                for (int i = 0; i < 2; i++) {
                    assertEquals(REFUSED, topo.tcp(client, "10.244.2.100", "10.96.0.11", 80).result());
                }
                // From outside to a Local NodePort whose only endpoint is on another node: dropped.
                assertEquals(TIMEOUT, topo.tcp(topo.ext, Sandbox.EXT_IP, Sandbox.NODE_IP, 30083).result());

                Map<String, Double> after = scrape(server.metricsPort());
                assertEquals(web0 + 20, value(after, web), "twenty more connections to web");
                double split = 0;
                for (String ep : new String[] {"10.244.1.2:8080", "10.244.1.3:8080"}) {
                    String k = series("nftproxy_endpoint_connections_total", "web", ",endpoint=\"" + ep + "\"");
                    double d = value(after, k) - Math.max(0, value(before, k));
                    assertEquals(answered.getOrDefault(ep, 0), (int) d, "the endpoint that answered counted it: " + ep);
                    split += value(after, k);
                }
                assertEquals(value(after, web), split, "web's connections, split over its endpoints");
                assertEquals(3.0, value(after, series("nftproxy_service_connections_total", "sticky", "")));
                assertEquals(3.0, value(after, series("nftproxy_endpoint_connections_total", "sticky",
                        ",endpoint=\"10.244.1.3:8080\"")), "counted in the chain of a service with affinity");
                assertEquals(2.0, value(after, series("nftproxy_service_refused_connections_total", "empty",
                        ",action=\"reject\"")), "a service without endpoints refuses, and counts it");
                // A dropped SYN leaves no conntrack entry: the client's retransmission is new again and counts again.
                double dropped = value(after, series("nftproxy_service_refused_connections_total", "local", ",action=\"drop\""));
                assertTrue(dropped >= 1 && dropped <= 3, "the external chain's drop, counted per attempt: " + dropped);
                assertTrue(after.get("nftproxy_service_counters_elements") > 0);
                assertEquals(0.0, after.get("nftproxy_service_counters_scrape_errors_total"));

                // web loses an endpoint: its elements are written again and the kernel's counts start
                // over; the exported counters carry on from where they were.
                new Manifests()
                        .service("web", "10.96.0.10", "[{name: http, port: 80}]")
                        .slice("web", "a", "IPv4", HTTP, "10.244.1.2@node-b")
                        .service("sticky", "10.96.0.12", "[{name: http, port: 80}]", "sessionAffinity: ClientIP")
                        .slice("sticky", "a", "IPv4", HTTP, "10.244.1.3@node-b")
                        .service("empty", "10.96.0.11", "[{name: http, port: 80}]")
                        .write(dir, "services.yaml");
                Sandbox.eventually(Duration.ofSeconds(20), () -> {
                    ProxyState st = synced.get();
                    return st != null && st.endpointsOf(WEB).size() == 1;
                }, "the sync that leaves web one endpoint");
                // Connections between the last scrape and the re-write are lost with the old element
                // (documented); from here on every one counts, on top of what was counted before.
                Map<String, Double> rewritten = scrape(server.metricsPort());
                assertTrue(value(rewritten, web) >= value(after, web), "never backwards: " + value(after, web) + " then "
                        + value(rewritten, web));
                for (int i = 0; i < 6; i++) {
                    assertEquals("10.244.1.2:8080", topo.tcp(client, "10.244.2.100", "10.96.0.10", 80).answeredBy());
                }
                Map<String, Double> later = scrape(server.metricsPort());
                assertEquals(value(rewritten, web) + 6, value(later, web), "counting on from the carried-over count");
                String gone = series("nftproxy_endpoint_connections_total", "web", ",endpoint=\"10.244.1.3:8080\"");
                assertEquals(value(after, gone), value(later, gone), "an endpoint gone keeps what it counted");
            }
        }
    }

    @Test
    void servicePortsAloneAreCountedAndReadByKeyAsByDump() throws Exception {
        try (Topology topo = new Topology(); NftClient nft = NftClient.open(topo.node.ns())) {
            topo.serve("10.244.1.2", 8080);
            topo.serve("10.244.1.3", 8080);
            Netns client = topo.pod("10.244.2.100");
            ProxyConfig cfg = config().withServiceCounters(true);
            ServicePortName empty = new ServicePortName("default", "empty", "http", Protocol.TCP);
            ServicePort web = ServicePort.builder(WEB, 80).clusterIPs(List.of(Inet.parse("10.96.0.10"))).build();
            ServicePort none = ServicePort.builder(empty, 80).clusterIPs(List.of(Inet.parse("10.96.0.11"))).build();
            ProxyState state = new ProxyState(Map.of(WEB, web, empty, none), Map.of(WEB, List.of(
                    Endpoint.ready(Inet.parse("10.244.1.2"), 8080, "node-b"), Endpoint.ready(Inet.parse("10.244.1.3"), 8080, "node-b"))),
                    NodeInfo.named("node-a"));
            Syncer syncer = new Syncer(nft, new NftRenderer(cfg), cfg.table());
            syncer.sync(state, null);
            for (int i = 0; i < 5; i++) {
                assertEquals(ANSWERED, topo.tcp(client, "10.244.2.100", "10.96.0.10", 80).result());
            }
            assertEquals(REFUSED, topo.tcp(client, "10.244.2.100", "10.96.0.11", 80).result());

            Map<CounterSeries, Long> byDump = read(nft, cfg, syncer, Integer.MAX_VALUE, state);
            Map<CounterSeries, Long> byKey = read(nft, cfg, syncer, 1, state);
            assertEquals(5L, byDump.get(new CounterSeries(CounterSeries.Kind.CONNECTIONS, WEB, null)), byDump.toString());
            assertEquals(1L, byDump.get(new CounterSeries(CounterSeries.Kind.REJECTED, empty, null)), byDump.toString());
            assertTrue(byDump.keySet().stream().noneMatch(x -> x.kind() == CounterSeries.Kind.ENDPOINT_CONNECTIONS),
                    byDump.toString());
            assertEquals(byDump, byKey, "by key, the same counts as by dump");

            // nft, as a witness: the frontends' set counts, the endpoint maps do not.
            String listed = topo.node.exec("nft", "list", "table", "ip", cfg.table());
            assertTrue(declaration(listed, "set " + TableNames.SERVICE_IPS).contains("counter"), listed);
            String map = declaration(listed, "map service-endpoints-1-8");
            assertTrue(!map.isEmpty() && !map.contains("counter"), map);
        }
    }

    /** A set's or map's declaration in nft's listing, up to its elements. */
    private static String declaration(String listed, String head) {
        int at = listed.indexOf(head + " {");
        if (at < 0) {
            return "";
        }
        int end = listed.indexOf("elements", at);
        int close = listed.indexOf('}', at);
        return listed.substring(at, end < 0 || close < end ? close : end);
    }

    private static Map<CounterSeries, Long> read(NftClient nft, ProxyConfig cfg, Syncer syncer, int byKeyFrom, ProxyState s) {
        ServiceCounters c = new ServiceCounters(nft, cfg.table(), CountedSets.countedSets(cfg),
                ServiceCounters.HeldElements.of(syncer), byKeyFrom);
        c.attributeWith(s);
        return c.read();
    }
}
