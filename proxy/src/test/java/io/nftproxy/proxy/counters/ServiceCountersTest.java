package io.nftproxy.proxy.counters;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringWriter;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.render.CountedSets;
import io.nftproxy.proxy.render.TableNames;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.CountedElement;
import io.nftproxy.netlink.nft.CounterReader;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.counters.CounterSeries.Kind;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.proxy.model.LbAlgorithm;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.MapKeys;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.PartialSyncPropertyTestAccess;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Generation;
import io.nftproxy.proxy.sync.Syncer;

/**
 * The counters end to end without root: the renderer's counting sets synced into the fake, the
 * fake's elements counted as traffic would count them, and what the collector attributes.
 */
class ServiceCountersTest {
    private static final ProxyConfig CFG = PartialSyncPropertyTestAccess.CFG.withEndpointCounters(true);
    private static final ProxyConfig SERVICES_ONLY = PartialSyncPropertyTestAccess.CFG.withServiceCounters(true);
    private static final ServicePortName WEB = new ServicePortName("ns", "web", "http", Protocol.TCP);
    private static final ServicePortName STICKY = new ServicePortName("ns", "sticky", "dns", Protocol.UDP);
    private static final ServicePortName EMPTY = new ServicePortName("ns", "empty", "http", Protocol.TCP);
    private static final ServicePortName LOCAL = new ServicePortName("ns", "local", "http", Protocol.TCP);
    private static final ServicePortName BIG_LOCAL = new ServicePortName("ns", "big-local", "http", Protocol.TCP);

    private static InetAddress ip(String s) {
        return Inet.parse(s);
    }

    private static ProxyState state(List<Endpoint> webEndpoints) {
        ServicePort web = ServicePort.builder(WEB, 80).clusterIPs(List.of(ip("10.96.0.10"), ip("fd00:96::10")))
                .nodePort(30080).build();
        ServicePort sticky = ServicePort.builder(STICKY, 53).clusterIPs(List.of(ip("10.96.0.12"))).affinitySeconds(600)
                .build();
        ServicePort empty = ServicePort.builder(EMPTY, 80).clusterIPs(List.of(ip("10.96.0.11"))).nodePort(30081)
                .build();
        // externalTrafficPolicy Local with no endpoint on this node: its NodePort drops.
        ServicePort local = ServicePort.builder(LOCAL, 80).clusterIPs(List.of(ip("10.96.0.13"))).nodePort(30082)
                .externalPolicyLocal(true).build();
        // The same, sticky, with more endpoints than the shared trees pick among has chains of
        // its own, whose rules count in chain-endpoints.
        ServicePort bigLocal = ServicePort.builder(BIG_LOCAL, 80).clusterIPs(List.of(ip("10.96.0.14"))).nodePort(30083)
                .externalPolicyLocal(true).affinitySeconds(600).build();
        List<Endpoint> big = new ArrayList<>();
        for (int i = 0; i <= NftRenderer.MAX_PLAIN_PICK; i++) {
            big.add(Endpoint.ready(ip("10.244." + (2 + i / 250) + "." + (2 + i % 250)), 8080, "node-b"));
        }
        return new ProxyState(Map.of(WEB, web, STICKY, sticky, EMPTY, empty, LOCAL, local, BIG_LOCAL, bigLocal),
                Map.of(WEB, webEndpoints, STICKY, List.of(Endpoint.ready(ip("10.244.1.5"), 5353, "node-b")),
                        LOCAL, List.of(Endpoint.ready(ip("10.244.1.6"), 8080, "node-b")), BIG_LOCAL, big),
                new NodeInfo("node-a", "z1", List.of(ip("192.168.50.2")), false));
    }


    private static Bytes endpointIndex(Bytes front, int i) {
        return Bytes.concat(front, Bytes.host32(i));
    }

    @Test
    void elementsAreAttributedToTheirServicePortEndpointAndRefusal() throws Exception {
        FakeNfTables fake = new FakeNfTables();
        Syncer syncer = new Syncer(fake, new NftRenderer(CFG), "nftproxy");
        List<Endpoint> two = List.of(Endpoint.ready(ip("10.244.1.2"), 8080, "node-b"),
                Endpoint.ready(ip("fd00:244::2"), 8080, "node-b"), Endpoint.ready(ip("10.244.1.3"), 8080, "node-b"));
        ProxyState s1 = state(two);
        syncer.sync(s1, null);
        ServiceCounters counters = new ServiceCounters(fake, "nftproxy", CountedSets.countedSets(CFG), null);
        counters.attributeWith(s1);

        int tcp = Protocol.TCP.number();
        Bytes webV4 = MapKeys.frontend(ip("10.96.0.10"), tcp, 80);
        fake.count(Family.IP, "nftproxy", TableNames.SERVICE_IPS, webV4, 4, 240);
        fake.count(Family.IP, "nftproxy", "service-endpoints-1-8", endpointIndex(webV4, 0), 3, 180);
        fake.count(Family.IP, "nftproxy", "service-endpoints-1-8", endpointIndex(webV4, 1), 1, 60);
        Bytes webV6 = MapKeys.frontend(ip("fd00:96::10"), tcp, 80);
        fake.count(Family.IP6, "nftproxy", TableNames.SERVICE_IPS, webV6, 2, 160);
        fake.count(Family.IP6, "nftproxy", "service-endpoints-1-8", endpointIndex(webV6, 0), 2, 160);
        Bytes webNodePort = MapKeys.nodePort(tcp, 30080);
        fake.count(Family.IP, "nftproxy", TableNames.SERVICE_NODEPORTS, webNodePort, 5, 300);
        fake.count(Family.IP, "nftproxy", "nodeport-endpoints-1-8", endpointIndex(webNodePort, 1), 5, 300);
        // sticky (affinity) is data as web is: its frontend and its endpoint by index count.
        Bytes stickyV4 = MapKeys.frontend(ip("10.96.0.12"), 17, 53);
        fake.count(Family.IP, "nftproxy", TableNames.SERVICE_IPS, stickyV4, 7, 0);
        fake.count(Family.IP, "nftproxy", "service-endpoints-1-8", endpointIndex(stickyV4, 0), 7, 0);
        fake.count(Family.IP, "nftproxy", TableNames.NO_ENDPOINT_REJECT, MapKeys.frontend(ip("10.96.0.11"), tcp, 80), 2, 0);
        fake.count(Family.IP, "nftproxy", TableNames.NODEPORT_NO_ENDPOINT_REJECT, MapKeys.nodePort(tcp, 30081), 1, 0);
        // local's NodePort goes to the shared external chain, which drops what is not from this
        // node or its pods (nothing local) by a lookup of the port in the set that counts that.
        fake.count(Family.IP, "nftproxy", TableNames.NODEPORT_NO_LOCAL_ENDPOINT, MapKeys.nodePort(tcp, 30082), 3, 0);
        // big-local's external chain counts its drop as the endpoint "unspecified address, port 0",
        // and its cluster chain each endpoint it picks.
        fake.count(Family.IP, "nftproxy", TableNames.CHAIN_ENDPOINTS,
                MapKeys.chainEndpoint(ip("10.96.0.14"), tcp, 80, ip("0.0.0.0"), 0), 2, 0);
        fake.count(Family.IP, "nftproxy", TableNames.CHAIN_ENDPOINTS,
                MapKeys.chainEndpoint(ip("10.96.0.14"), tcp, 80, ip("10.244.2.7"), 8080), 4, 0);

        Map<CounterSeries, Long> t = counters.read();
        assertEquals(11L, t.get(new CounterSeries(Kind.CONNECTIONS, WEB, null)), "ClusterIPs of both families and the NodePort");
        assertEquals(3L, t.get(new CounterSeries(Kind.ENDPOINT_CONNECTIONS, WEB, "10.244.1.2:8080")));
        assertEquals(6L, t.get(new CounterSeries(Kind.ENDPOINT_CONNECTIONS, WEB, "10.244.1.3:8080")), "by ClusterIP and NodePort");
        assertEquals(2L, t.get(new CounterSeries(Kind.ENDPOINT_CONNECTIONS, WEB, "[fd00:244::2]:8080")));
        assertEquals(7L, t.get(new CounterSeries(Kind.CONNECTIONS, STICKY, null)));
        assertEquals(7L, t.get(new CounterSeries(Kind.ENDPOINT_CONNECTIONS, STICKY, "10.244.1.5:5353")),
                "an affinity service's endpoint, counted by its index");
        assertEquals(3L, t.get(new CounterSeries(Kind.REJECTED, EMPTY, null)), "its ClusterIP and its NodePort");
        assertEquals(3L, t.get(new CounterSeries(Kind.DROPPED, LOCAL, null)));
        assertEquals(0L, t.get(new CounterSeries(Kind.CONNECTIONS, LOCAL, null)), "series start at zero");
        assertEquals(2L, t.get(new CounterSeries(Kind.DROPPED, BIG_LOCAL, null)));
        assertEquals(4L, t.get(new CounterSeries(Kind.ENDPOINT_CONNECTIONS, BIG_LOCAL, "10.244.2.7:8080")));

        // web loses 10.244.1.2: the sync writes its elements again, and the kernel's counts restart.
        ProxyState s2 = state(two.subList(1, 3));
        syncer.sync(s2, Set.of(WEB));
        counters.attributeWith(s2);
        fake.count(Family.IP, "nftproxy", TableNames.SERVICE_IPS, webV4, 1, 60);
        Map<CounterSeries, Long> t2 = counters.read();
        assertTrue(t2.get(new CounterSeries(Kind.CONNECTIONS, WEB, null)) >= 12L, t2.toString());
        assertEquals(3L, t2.get(new CounterSeries(Kind.ENDPOINT_CONNECTIONS, WEB, "10.244.1.2:8080")),
                "the endpoint that left keeps its count while web exists");
        String text = exposition(counters);
        assertTrue(text.contains("nftproxy_endpoint_connections_total{namespace=\"ns\",service=\"web\",port=\"http\","
                + "protocol=\"tcp\",endpoint=\"10.244.1.2:8080\",} 3.0"), text);
        assertTrue(text.contains("nftproxy_service_refused_connections_total{namespace=\"ns\",service=\"local\","
                + "port=\"http\",protocol=\"tcp\",action=\"drop\",} 3.0"), text);
    }

    @Test
    void aFailedReadKeepsTheLastTotalsAndIsCounted() throws Exception {
        FakeNfTables fake = new FakeNfTables();
        ProxyState s = state(List.of(Endpoint.ready(ip("10.244.1.2"), 8080, "node-b")));
        new Syncer(fake, new NftRenderer(CFG), "nftproxy").sync(s, null);
        boolean[] fail = {false};
        ServiceCounters counters = new ServiceCounters((f, table, set) -> {
            if (fail[0]) {
                throw new NftException("dumping " + set, 1, null);
            }
            return fake.countedElements(f, table, set);
        }, "nftproxy", CountedSets.countedSets(CFG), null);
        counters.attributeWith(s);
        fake.count(Family.IP, "nftproxy", TableNames.SERVICE_IPS, MapKeys.frontend(ip("10.96.0.10"), 6, 80), 4, 0);
        assertEquals(4L, counters.read().get(new CounterSeries(Kind.CONNECTIONS, WEB, null)));
        fail[0] = true;
        assertEquals(4L, counters.read().get(new CounterSeries(Kind.CONNECTIONS, WEB, null)));
        assertTrue(exposition(counters).contains("nftproxy_service_counters_scrape_errors_total 2.0"),
                "both reads of the exposition failed too");
    }

    @Test
    void servicePortsAloneCountNoEndpointAndLargeSetsAreReadByTheKeysHeld() throws Exception {
        FakeNfTables fake = new FakeNfTables();
        Syncer syncer = new Syncer(fake, new NftRenderer(SERVICES_ONLY), "nftproxy");
        List<Endpoint> two = List.of(Endpoint.ready(ip("10.244.1.2"), 8080, "node-b"), Endpoint.ready(ip("10.244.1.3"), 8080, "node-b"));
        ProxyState s = state(two);
        syncer.sync(s, null);
        int tcp = Protocol.TCP.number();
        Bytes webV4 = MapKeys.frontend(ip("10.96.0.10"), tcp, 80);
        assertThrows(IllegalArgumentException.class, () -> fake.count(Family.IP, "nftproxy", "service-endpoints-1-8",
                endpointIndex(webV4, 0), 1, 0), "the endpoint maps carry no counter");
        assertEquals(List.of(MapKeys.chainEndpoint(ip("10.96.0.14"), tcp, 80, ip("0.0.0.0"), 0)),
                fake.listElements(Family.IP, "nftproxy", TableNames.CHAIN_ENDPOINTS).stream().map(e -> e.key()).toList(),
                "the chains count their drop, no endpoint");

        // Every set read by key (from one element on), with the keys the syncer holds; one of
        // them taken out by a sync between taking the keys and reading them.
        List<String> byKey = new ArrayList<>();
        Bytes gone = MapKeys.frontend(ip("10.96.0.99"), tcp, 80);
        ServiceCounters.HeldElements syncers = ServiceCounters.HeldElements.of(syncer);
        ServiceCounters.HeldElements held = new ServiceCounters.HeldElements() {
            @Override
            public int count(IpFamily family, String set) {
                return syncers.count(family, set);
            }

            @Override
            public List<Bytes> keys(IpFamily family, String set) {
                List<Bytes> k = new ArrayList<>(syncers.keys(family, set));
                k.add(0, gone);
                return k;
            }
        };
        CounterReader reader = new CounterReader() {
            @Override
            public List<CountedElement> countedElements(Family f, String table, String set) {
                throw new AssertionError("dumped " + set);
            }

            @Override
            public List<CountedElement> countedElements(Family f, String table, String set, List<Bytes> keys) throws NftException {
                byKey.add(f.keyword() + " " + set);
                return fake.countedElements(f, table, set, keys);
            }
        };
        ServiceCounters counters = new ServiceCounters(reader, "nftproxy", CountedSets.countedSets(SERVICES_ONLY), held, 1);
        counters.attributeWith(s);
        fake.count(Family.IP, "nftproxy", TableNames.SERVICE_IPS, webV4, 4, 0);
        fake.count(Family.IP, "nftproxy", TableNames.SERVICE_NODEPORTS, MapKeys.nodePort(tcp, 30080), 2, 0);
        fake.count(Family.IP, "nftproxy", TableNames.NO_ENDPOINT_REJECT, MapKeys.frontend(ip("10.96.0.11"), tcp, 80), 1, 0);
        Map<CounterSeries, Long> t = counters.read();
        assertEquals(6L, t.get(new CounterSeries(Kind.CONNECTIONS, WEB, null)), "its ClusterIP and its NodePort");
        assertEquals(1L, t.get(new CounterSeries(Kind.REJECTED, EMPTY, null)));
        assertTrue(t.keySet().stream().noneMatch(x -> x.kind() == Kind.ENDPOINT_CONNECTIONS), t.toString());
        assertTrue(byKey.contains("ip " + TableNames.SERVICE_IPS) && byKey.contains("ip6 " + TableNames.NO_ENDPOINT_REJECT),
                "web has no IPv6 endpoint: " + byKey);
        assertFalse(byKey.contains("ip " + TableNames.NO_LOCAL_ENDPOINT), "a set we hold nothing in is not read: " + byKey);
        String text = exposition(counters);
        assertFalse(text.contains("nftproxy_endpoint_connections"), text);
        assertTrue(text.contains("nftproxy_service_connections_total{namespace=\"ns\",service=\"web\",port=\"http\","
                + "protocol=\"tcp\",} 6.0"), text);
    }

    private static String exposition(ServiceCounters c) throws Exception {
        io.prometheus.client.CollectorRegistry r = new io.prometheus.client.CollectorRegistry();
        c.register(r);
        StringWriter w = new StringWriter();
        io.prometheus.client.exporter.common.TextFormat.write004(w, r.metricFamilySamples());
        return w.toString();
    }

    @Test
    void theHourlyReassertionCountsOnAndARebuildCarriesWhatWasRead() throws Exception {
        FakeNfTables fake = new FakeNfTables();
        Syncer syncer = new Syncer(fake, new NftRenderer(CFG), "nftproxy");
        ProxyState s = state(List.of(Endpoint.ready(ip("10.244.1.2"), 8080, "node-b")));
        syncer.sync(s, null);
        ServiceCounters counters = new ServiceCounters(fake, "nftproxy", CountedSets.countedSets(CFG),
                ServiceCounters.HeldElements.of(syncer));
        counters.attributeWith(s);
        Bytes web = MapKeys.frontend(ip("10.96.0.10"), 6, 80);
        fake.count(Family.IP, "nftproxy", TableNames.SERVICE_IPS, web, 5, 0);
        assertEquals(5L, counters.read().get(new CounterSeries(Kind.CONNECTIONS, WEB, null)));
        fake.count(Family.IP, "nftproxy", TableNames.SERVICE_IPS, web, 3, 0); // between the scrape and the sync
        // The hourly re-assertion adds every element again, which leaves the kernel's elements
        // (and their counts) as they are.
        SyncResult reasserted = syncer.sync(s, null);
        assertFalse(reasserted.elementsRecreated());
        fake.count(Family.IP, "nftproxy", TableNames.SERVICE_IPS, web, 9, 0);
        assertEquals(17L, counters.read().get(new CounterSeries(Kind.CONNECTIONS, WEB, null)),
                "5 + 3 + 9, counted on across the re-assertion");
        // A rebuild creates every element anew: their counts start over, and what was last read is carried.
        counters.read();
        syncer.forgetCommitted();
        SyncResult rebuilt = syncer.sync(s, null);
        assertTrue(rebuilt.elementsRecreated());
        // The rebuild wrote the table beside the one in use, under the other generation's names.
        assertEquals(Generation.SECOND, syncer.generation());
        counters.recreated();
        fake.count(Family.IP, "nftproxy", Generation.SECOND.set(TableNames.SERVICE_IPS), web, 4, 0);
        assertEquals(21L, counters.read().get(new CounterSeries(Kind.CONNECTIONS, WEB, null)), "17 carried + 4 after the rebuild");
    }

    @Test
    void aHashedPortCountsItsConnectionsAndEachEndpointsOverItsSlots() throws Exception {
        FakeNfTables fake = new FakeNfTables();
        Syncer syncer = new Syncer(fake, new NftRenderer(CFG), "nftproxy");
        ServicePortName id = new ServicePortName("ns", "hashed", "http", Protocol.TCP);
        ServicePort hashed = ServicePort.builder(id, 80).clusterIPs(List.of(ip("10.96.0.30"))).nodePort(30030)
                .algorithm(LbAlgorithm.MAGLEV).build();
        List<Endpoint> eps = List.of(Endpoint.ready(ip("10.244.1.2"), 8080, "node-b"), Endpoint.ready(ip("10.244.1.3"), 8080, "node-b"));
        ProxyState st = new ProxyState(Map.of(id, hashed), Map.of(id, eps), new NodeInfo("node-a", null, List.of(ip("192.168.50.2")), false));
        syncer.sync(st, null);
        ServiceCounters counters = new ServiceCounters(fake, "nftproxy", CountedSets.countedSets(CFG), null);
        counters.attributeWith(st);

        int tcp = Protocol.TCP.number();
        Bytes front = MapKeys.frontend(ip("10.96.0.30"), tcp, 80);
        Bytes nodePort = MapKeys.nodePort(tcp, 30030);
        fake.count(Family.IP, "nftproxy", TableNames.SERVICE_CHAINS, front, 5, 0);
        fake.count(Family.IP, "nftproxy", TableNames.NODEPORT_CHAINS, nodePort, 2, 0);
        // Each slot is an element of its own: the counts of an endpoint's slots add up.
        Map<String, List<Integer>> slotsOf = new java.util.HashMap<>();
        for (SetElement e : fake.listElements(Family.IP, "nftproxy", "ip-maglev-slots-809")) {
            slotsOf.computeIfAbsent(MapKeys.endpointText(((Data.Value) e.data()).bytes(), 4), k -> new java.util.ArrayList<>())
                    .add(e.key().host32At(e.key().length() - 4));
        }
        List<Integer> first = slotsOf.get("10.244.1.2:8080");
        fake.count(Family.IP, "nftproxy", "ip-maglev-slots-809", endpointIndex(front, first.get(0)), 3, 0);
        fake.count(Family.IP, "nftproxy", "ip-maglev-slots-809", endpointIndex(front, first.get(1)), 1, 0);
        fake.count(Family.IP, "nftproxy", "ip-maglev-slots-809", endpointIndex(front, slotsOf.get("10.244.1.3:8080").get(0)), 1, 0);
        fake.count(Family.IP, "nftproxy", "nodeport-maglev-slots-809", endpointIndex(nodePort, first.get(0)), 2, 0);

        Map<CounterSeries, Long> t = counters.read();
        assertEquals(7L, t.get(new CounterSeries(Kind.CONNECTIONS, id, null)), "its ClusterIP and its NodePort");
        assertEquals(6L, t.get(new CounterSeries(Kind.ENDPOINT_CONNECTIONS, id, "10.244.1.2:8080")), "over two slots and the NodePort's");
        assertEquals(1L, t.get(new CounterSeries(Kind.ENDPOINT_CONNECTIONS, id, "10.244.1.3:8080")));
    }
}
