package io.nftproxy.proxy.kernel;

import static io.nftproxy.sandbox.Sandbox.Outcome.Result.ANSWERED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.TransactionException;

import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.Syncer;
import io.nftproxy.sandbox.Netns;

/**
 * ClientIP affinity of a service that is only data, with real connections, while its endpoints
 * change through partial syncs, as kube-proxy keeps it: every client keeps its endpoint while that
 * endpoint stays, whatever else comes and goes, and the clients of an endpoint that went pick
 * again among the others, never sent nowhere.
 */
class AffinityAcrossChangesKernelTest {
    static final ServicePortName ID = new ServicePortName("default", "sticky", "http", Protocol.TCP);
    static final List<String> EPS = List.of("10.244.1.2", "10.244.1.3", "10.244.1.4", "10.244.1.5");
    static final List<String> CLIENTS = new ArrayList<>();

    static {
        for (int i = 0; i < 16; i++) {
            CLIENTS.add("10.244.2." + (100 + i));
        }
    }

    static ProxyState state(List<String> eps) {
        ServicePort svc = ServicePort.builder(ID, 80).clusterIPs(List.of(Inet.parse("10.96.0.30"))).nodePort(30030)
                .affinitySeconds(60).build();
        List<Endpoint> list = eps.stream().map(a -> Endpoint.ready(Inet.parse(a), 8080, "node-b")).toList();
        return new ProxyState(Map.of(ID, svc), Map.of(ID, list), NodeInfo.named("node-a"));
    }

    /** Each client's endpoint, asked three times (all three must agree). */
    static Map<String, String> chosen(Topology topo, Netns clients) throws Exception {
        return chosen(topo, clients, CLIENTS, "10.96.0.30");
    }

    /** Each of {@code ips}' endpoint behind ip:80, asked three times (all three must agree). */
    static Map<String, String> chosen(Topology topo, Netns clients, List<String> ips, String ip) throws Exception {
        Map<String, String> out = new LinkedHashMap<>();
        for (String c : ips) {
            String first = null;
            for (int i = 0; i < 3; i++) {
                Topology.Outcome o = topo.tcp(clients, c, ip, 80);
                assertEquals(ANSWERED, o.result(), c + ": " + o);
                if (first == null) {
                    first = o.answeredBy();
                }
                assertEquals(first, o.answeredBy(), "client " + c + " sticks to one endpoint");
            }
            out.put(c, first);
        }
        return out;
    }

    /** A node of the sandbox's topology, its pods in 10.244.0.0/16, its services in 10.96.0.0/16. */
    static ProxyConfig config() {
        return ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse(Topology.NODE_IP)))
                .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16")))
                .build();
    }

    /** The sandbox's topology with a server on every endpoint of EPS. */
    static Topology serving() throws Exception {
        Topology topo = new Topology();
        try {
            for (String ep : EPS) {
                topo.serve(ep, 8080);
            }
            return topo;
        } catch (Exception e) {
            topo.close(); // its namespaces go with it
            throw e;
        }
    }

    @Test
    void clientsKeepTheirEndpointWhileItStays() throws Exception {
        ProxyConfig cfg = config();
        try (Topology topo = serving(); NftClient nft = NftClient.open(topo.node.ns())) {
            Netns clients = topo.pod(CLIENTS.toArray(new String[0]));
            Syncer syncer = new Syncer(nft, new NftRenderer(cfg), "nftproxy");
            syncer.sync(state(EPS), null);
            // The operator's tools read the shared sticky chains (nft lists them, also as JSON).
            String listed = topo.node.exec("nft", "list", "table", "ip", "nftproxy");
            assertTrue(listed.contains("ip daddr . meta l4proto . th dport @sticky-ips jump ip-sticky-check"), listed);
            assertTrue(listed.contains("delete @ip-affinity"), listed);
            assertTrue(topo.node.exec("nft", "-j", "list", "ruleset").contains("ip-sticky-check-1-8"), "nft -j reads them");
            Map<String, String> before = chosen(topo, clients);
            assertTrue(Set.copyOf(before.values()).size() >= 3, "clients spread over the endpoints: " + before);

            // An endpoint some client is on goes, one before the last (10.244.1.3, index 1, unless
            // the random picks left it without a client); 10.244.1.5 (the last index, 3) takes its
            // index, and keeps its clients all the same: they are remembered by its number, not its index.
            String gone = List.of("10.244.1.3", "10.244.1.2", "10.244.1.4").stream()
                    .filter(e -> before.values().stream().anyMatch(v -> v.startsWith(e + ":"))).findFirst().orElseThrow();
            List<String> stay = EPS.stream().filter(e -> !e.equals(gone)).toList();
            syncer.sync(state(stay), Set.of(ID));
            Map<String, String> after = chosen(topo, clients);
            int moved = 0;
            for (String c : CLIENTS) {
                String had = before.get(c);
                if (had.startsWith(gone + ":")) {
                    moved++;
                } else {
                    assertEquals(had, after.get(c), "client " + c + " keeps its endpoint, which stayed");
                }
                assertTrue(!after.get(c).startsWith(gone + ":"), "never the endpoint that went: " + c);
            }
            // The entries of the endpoint that went are gone (deleted as its clients came back),
            // each client has one, and the removed endpoint's clients are remembered anew.
            assertEquals(CLIENTS.size(), affinityEntries(nft), "one entry per client");

            // A new endpoint takes a number never given: nobody is sent to it for an old memory.
            List<String> back = new java.util.ArrayList<>(stay);
            back.add(gone);
            syncer.sync(state(back), Set.of(ID));
            assertEquals(after, chosen(topo, clients), "every client stays where it was after an endpoint came");

            // Down to one endpoint: every client that remembered another is picked for again.
            syncer.sync(state(List.of("10.244.1.2")), Set.of(ID));
            for (String c : CLIENTS) {
                Topology.Outcome o = topo.tcp(clients, c, "10.96.0.30", 80);
                assertEquals("10.244.1.2:8080", o.answeredBy(), c + ": " + o);
            }
            // And back to two: the clients all stay where they are.
            syncer.sync(state(List.of("10.244.1.2", "10.244.1.4")), Set.of(ID));
            for (String c : CLIENTS) {
                Topology.Outcome o = topo.tcp(clients, c, "10.96.0.30", 80);
                assertEquals("10.244.1.2:8080", o.answeredBy(), "still sticky after the count grew: " + c + ": " + o);
            }
            assertTrue(moved > 0, "some client was on the endpoint that went: " + before);
        }
    }

    /** How many clients the kernel remembers for ClusterIP-like frontends. */
    static int affinityEntries(NftClient nft) throws Exception {
        return nft.listElements(Family.IP, "nftproxy", "ip-affinity").size();
    }

    /**
     * The kernel caps a set it writes at 65,535 entries when no size is given, and an update it
     * refuses ends its rule. The affinity set is given a larger size; once it is full all the same,
     * a new client of a sticky service loses its stickiness, not its connection: it is still sent
     * to an endpoint, every time.
     */
    @Test
    void aFullAffinitySetCostsANewClientItsStickinessNotItsConnection() throws Exception {
        ProxyConfig cfg = config();
        try (Topology topo = serving(); NftClient nft = NftClient.open(topo.node.ns())) {
            Netns clients = topo.pod(CLIENTS.get(0));
            Syncer syncer = new Syncer(nft, new NftRenderer(cfg), "nftproxy");
            syncer.sync(state(EPS), null);
            NftSet affinity = nft.listSets(Family.IP, "nftproxy").stream().filter(x -> x.name().equals("ip-affinity"))
                    .findFirst().orElseThrow();
            assertTrue(affinity.size() > 65_535, "sized past the kernel's default: " + affinity.size());
            // Fill it with other clients' entries, halving the batch each time the kernel refuses
            // one, until it refuses a single entry: full.
            int filled = 0;
            int batch = 16_384;
            while (batch > 0 && filled <= affinity.size()) {
                List<SetElement> els = new ArrayList<>();
                for (int j = 0; j < batch; j++) {
                    byte[] key = new byte[affinity.keyLength()];
                    int n = filled + j;
                    key[0] = (byte) 198; // clients 198.18.0.0 onwards, the rest of the key left zero
                    key[1] = (byte) (18 + (n >>> 16));
                    key[2] = (byte) (n >>> 8);
                    key[3] = (byte) n;
                    els.add(SetElement.of(Bytes.of(key)));
                }
                try {
                    nft.commit(new Transaction().add(new Elements(Family.IP, "nftproxy", "ip-affinity", els)));
                    filled += batch;
                } catch (TransactionException e) {
                    batch /= 2;
                }
            }
            assertEquals(affinity.size(), filled, "the set took as many entries as its size, then none");
            for (int i = 0; i < 10; i++) {
                Topology.Outcome o = topo.tcp(clients, CLIENTS.get(0), "10.96.0.30", 80);
                assertEquals(ANSWERED, o.result(), "a new client while the affinity set is full: " + o);
            }
            // Still full: the client's connections were not remembered (a dump of a million
            // entries took the kernel tens of seconds: it restarts the walk for every message).
            byte[] one = new byte[affinity.keyLength()];
            one[0] = (byte) 203;
            assertThrows(TransactionException.class, () -> nft.commit(new Transaction().add(
                    new Elements(Family.IP, "nftproxy", "ip-affinity", List.of(SetElement.of(Bytes.of(one)))))),
                    "the set is still full");
        }
    }
}
