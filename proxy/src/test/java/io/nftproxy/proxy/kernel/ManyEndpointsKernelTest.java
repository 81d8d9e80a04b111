package io.nftproxy.proxy.kernel;

import static io.nftproxy.sandbox.Sandbox.Outcome.Result.ANSWERED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.render.TableNames;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.render.Transitions;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;
import io.nftproxy.sandbox.Netns;

/**
 * A service with more endpoints than the shared tree picks among, as data: its count in a block
 * of the trees, declared while it is used. Real connections through its ClusterIP and NodePort
 * while it grows within a block (elements only), shrinks out of it (the block goes) and grows
 * into the next; every connection is answered by one of the endpoints it has at that moment.
 * The endpoints are one pod's address on as many ports (each port a server of the sandbox).
 */
class ManyEndpointsKernelTest {
    static final ServicePortName ID = new ServicePortName("default", "many", "http", Protocol.TCP);
    static final String POD = "10.244.1.2";
    static final int FIRST_PORT = 9000;
    static final String CLIENT = "10.244.2.100";

    static ProxyState state(int endpoints) {
        ServicePort svc = ServicePort.builder(ID, 80).clusterIPs(List.of(Inet.parse("10.96.0.50"))).nodePort(30050).build();
        List<Endpoint> eps = new ArrayList<>();
        for (int i = 0; i < endpoints; i++) {
            eps.add(Endpoint.ready(Inet.parse(POD), FIRST_PORT + i, "node-b"));
        }
        return new ProxyState(Map.of(ID, svc), Map.of(ID, eps), NodeInfo.named("node-a"));
    }

    /**
     * Which endpoints answer {@code n} connections to ip:port (from a pod, or from outside for
     * the node's address), each asserted to be one of the first {@code endpoints}.
     */
    static Set<String> answers(Topology topo, Netns client, String ip, int port, int n, int endpoints) throws Exception {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < n; i++) {
            Topology.Outcome o = ip.equals(Topology.NODE_IP) ? topo.tcp(topo.ext, null, ip, port)
                    : topo.tcp(client, CLIENT, ip, port);
            assertEquals(ANSWERED, o.result(), ip + ":" + port + ": " + o);
            int answeredPort = Integer.parseInt(o.answeredBy().substring(o.answeredBy().lastIndexOf(':') + 1));
            assertTrue(answeredPort >= FIRST_PORT && answeredPort < FIRST_PORT + endpoints,
                    "answered by a current endpoint (" + endpoints + "): " + o);
            seen.add(o.answeredBy());
        }
        return seen;
    }

    /** A server on each of the pod's first {@code n} endpoint ports. */
    static void serve(Topology topo, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            topo.serve(POD, FIRST_PORT + i);
        }
    }

    /** A syncer into {@code nft} whose clock reads {@code now[0]} (the tests move it past what changes keep). */
    static Syncer syncer(NftClient nft, ProxyConfig cfg, long[] now) {
        Syncer syncer = new Syncer(nft, new NftRenderer(cfg), "nftproxy");
        syncer.clock(() -> now[0]);
        return syncer;
    }

    static String sets(Topology topo) {
        return topo.node.exec("nft", "-t", "list", "sets", "ip");
    }

    @Test
    void groupsPastTheTreeAreDataInBlocksDeclaredWhileUsed() throws Exception {
        ProxyConfig cfg = AffinityAcrossChangesKernelTest.config();
        int most = 2 * NftRenderer.MAX_SHARED_PICK + 10;
        try (Topology topo = new Topology(); NftClient nft = NftClient.open(topo.node.ns())) {
            serve(topo, most);
            Netns client = topo.pod(CLIENT);
            long[] now = {0};
            Syncer syncer = syncer(nft, cfg, now);
            int k = NftRenderer.MAX_SHARED_PICK + 2;
            syncer.sync(state(k), null);
            assertTrue(sets(topo).contains("set ip-count-block-1 "), sets(topo));
            assertFalse(topo.node.exec("nft", "list", "chains", "ip").contains("svc-"), "no chain of its own");
            Set<String> seen = answers(topo, client, "10.96.0.50", 80, 40, k);
            assertTrue(seen.size() >= 20, "40 connections spread over " + k + " endpoints: " + seen.size());
            answers(topo, client, Topology.NODE_IP, 30050, 10, k);

            // Within the block: elements only, the new endpoint reachable.
            SyncResult grown = syncer.sync(state(k + 1), Set.of(ID));
            assertEquals(0, grown.changedChains(), "an endpoint added past 128 changes no chain");
            answers(topo, client, "10.96.0.50", 80, 20, k + 1);

            // Out of the block: the port is back in the tree, and the block goes with its last
            // user, once what the change keeps for connections crossing it has had its time.
            int fewer = NftRenderer.MAX_SHARED_PICK - 28;
            syncer.sync(state(fewer), Set.of(ID));
            assertTrue(sets(topo).contains("ip-count-block-1"), "kept for connections crossing the change: " + sets(topo));
            answers(topo, client, "10.96.0.50", 80, 20, fewer);
            now[0] += Transitions.GRACE.toNanos();
            syncer.sync(state(fewer), Set.of());
            assertFalse(sets(topo).contains("ip-count-block-1"), sets(topo));
            answers(topo, client, "10.96.0.50", 80, 20, fewer);

            // Into the next block.
            syncer.sync(state(most), Set.of(ID));
            assertTrue(sets(topo).contains("set ip-count-block-2 "), sets(topo));
            assertFalse(sets(topo).contains("ip-count-block-1"), "only the block in use: " + sets(topo));
            Set<String> wide = answers(topo, client, "10.96.0.50", 80, 40, most);
            assertTrue(wide.size() >= 20, "40 connections spread over " + most + " endpoints: " + wide.size());
            answers(topo, client, Topology.NODE_IP, 30050, 10, most);
        }
    }

    /**
     * Past the blocks the tree's root asks for (1,024 endpoints), a plain port is sent to its
     * block's tree by its element of {@code service-chains}: no chain of its own, a new
     * connection reads the verdict map and the block's bit sets whatever the count, an endpoint
     * added within the block changes no chain, and one that takes the count into the next block
     * changes the verdict element after the next block's tree is in.
     */
    @Test
    void groupsPastTheRootsBlocksAreSentToTheirBlockByAVerdictElement() throws Exception {
        ProxyConfig cfg = AffinityAcrossChangesKernelTest.config();
        int k = NftRenderer.MAX_PLAIN_PICK + 76; // 1,100: block 8
        int most = NftRenderer.MAX_PLAIN_PICK + NftRenderer.MAX_SHARED_PICK + 8; // 1,160: block 9
        try (Topology topo = new Topology(); NftClient nft = NftClient.open(topo.node.ns())) {
            serve(topo, most);
            Netns client = topo.pod(CLIENT);
            long[] now = {0};
            Syncer syncer = syncer(nft, cfg, now);
            syncer.sync(state(k), null);
            String chains = topo.node.exec("nft", "list", "chains", "ip");
            assertFalse(chains.contains("svc-"), "no chain of its own: " + chains);
            assertTrue(chains.contains("chain ip-pick-1025-1152 "), chains);
            String verdicts = topo.node.exec("nft", "list", "map", "ip", "nftproxy", TableNames.SERVICE_CHAINS);
            assertTrue(verdicts.contains("10.96.0.50 . tcp . 80") && verdicts.contains("goto ip-pick-1025-1152"), verdicts);
            Set<String> seen = answers(topo, client, "10.96.0.50", 80, 60, k);
            assertTrue(seen.size() >= 40, "60 connections spread over " + k + " endpoints: " + seen.size());
            Set<String> outside = answers(topo, client, Topology.NODE_IP, 30050, 20, k);
            assertTrue(outside.size() >= 10, "the NodePort too: " + outside.size());

            // Within the block: elements only, no verdict and no chain.
            SyncResult grown = syncer.sync(state(k + 1), Set.of(ID));
            assertEquals(0, grown.changedChains(), "an endpoint added past 1,024 changes no chain");
            answers(topo, client, "10.96.0.50", 80, 20, k + 1);

            // Into the next block: its tree, then the verdict; the old block's goes after the
            // elements kept for connections crossing the change.
            syncer.sync(state(most), Set.of(ID));
            verdicts = topo.node.exec("nft", "list", "map", "ip", "nftproxy", TableNames.SERVICE_CHAINS);
            assertTrue(verdicts.contains("goto ip-pick-1153-1280"), verdicts);
            answers(topo, client, "10.96.0.50", 80, 20, most);
            now[0] += Transitions.GRACE.toNanos();
            syncer.sync(state(most), Set.of());
            chains = topo.node.exec("nft", "list", "chains", "ip");
            assertFalse(chains.contains("ip-pick-1025-1152"), "only the block in use: " + chains);
            assertTrue(chains.contains("chain ip-pick-1153-1280 "), chains);
            answers(topo, client, Topology.NODE_IP, 30050, 10, most);

            // Back under 1,024: the root's blocks; the verdict map goes with its last element.
            int fewer = NftRenderer.MAX_PLAIN_PICK - 24;
            syncer.sync(state(fewer), Set.of(ID));
            answers(topo, client, "10.96.0.50", 80, 20, fewer);
            now[0] += 2 * Transitions.GRACE.toNanos();
            syncer.sync(state(fewer), Set.of());
            assertTrue(sets(topo).contains("set ip-count-block-7 "), sets(topo));
            assertFalse(sets(topo).contains(TableNames.SERVICE_CHAINS), sets(topo));
            answers(topo, client, "10.96.0.50", 80, 20, fewer);
        }
    }

    /**
     * External traffic policy Local past 1,024 cluster endpoints, three of them on this node:
     * traffic from outside to its NodePort reaches this node's three only; this node's pods reach
     * every endpoint, through the cluster count's block, which the external chain's verdict map
     * sends them to; its ClusterIP is a plain port's. No chain of its own.
     */
    @Test
    void localGroupsPastTheRootsBlocksSendPodsToTheirClusterBlock() throws Exception {
        ProxyConfig cfg = AffinityAcrossChangesKernelTest.config();
        int k = NftRenderer.MAX_PLAIN_PICK + 76;
        ServicePortName id = new ServicePortName("default", "many-local", "http", Protocol.TCP);
        ServicePort svc = ServicePort.builder(id, 80).clusterIPs(List.of(Inet.parse("10.96.0.52"))).nodePort(30052)
                .externalPolicyLocal(true).build();
        List<Endpoint> eps = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            eps.add(Endpoint.ready(Inet.parse(POD), FIRST_PORT + i, i < 3 ? "node-a" : "node-b"));
        }
        try (Topology topo = new Topology(); NftClient nft = NftClient.open(topo.node.ns())) {
            serve(topo, k);
            Netns client = topo.pod(CLIENT);
            new Syncer(nft, new NftRenderer(cfg), "nftproxy").sync(new ProxyState(Map.of(id, svc), Map.of(id, eps),
                    NodeInfo.named("node-a")), null);
            assertFalse(topo.node.exec("nft", "list", "chains", "ip").contains("svc-"), "no chain of its own");
            String blocks = topo.node.exec("nft", "list", "map", "ip", "nftproxy", TableNames.NODEPORT_EXTERNAL_LOCAL_BLOCKS);
            assertTrue(blocks.contains("tcp . 30052") && blocks.contains("goto nodeport-pick-1025-1152"), blocks);

            for (int i = 0; i < 20; i++) {
                Topology.Outcome o = topo.tcp(topo.ext, null, Topology.NODE_IP, 30052);
                assertEquals(ANSWERED, o.result(), "from outside: " + o);
                int port = Integer.parseInt(o.answeredBy().substring(o.answeredBy().lastIndexOf(':') + 1));
                assertTrue(port < FIRST_PORT + 3, "from outside, one of this node's three: " + o);
            }
            Set<String> fromPod = new HashSet<>();
            for (int i = 0; i < 60; i++) {
                Topology.Outcome o = topo.tcp(client, CLIENT, Topology.NODE_IP, 30052);
                assertEquals(ANSWERED, o.result(), "from a pod: " + o);
                fromPod.add(o.answeredBy());
            }
            assertTrue(fromPod.size() >= 40, "a pod reaches every endpoint: 60 connections over " + fromPod.size());
            Set<String> viaClusterIP = answers(topo, client, "10.96.0.52", 80, 40, k);
            assertTrue(viaClusterIP.size() >= 25, "the ClusterIP too: " + viaClusterIP.size());
        }
    }

    static final ServicePortName STICKY = new ServicePortName("default", "many-sticky", "http", Protocol.TCP);

    static ProxyState sticky(int endpoints) {
        ServicePort svc = ServicePort.builder(STICKY, 80).clusterIPs(List.of(Inet.parse("10.96.0.51"))).nodePort(30051)
                .affinitySeconds(60).build();
        List<Endpoint> eps = new ArrayList<>();
        for (int i = 0; i < endpoints; i++) {
            eps.add(Endpoint.ready(Inet.parse(POD), FIRST_PORT + i, "node-b"));
        }
        return new ProxyState(Map.of(STICKY, svc), Map.of(STICKY, eps), NodeInfo.named("node-a"));
    }

    /** Each client's endpoint through the sticky ClusterIP (it sticks), each one of the first {@code endpoints}. */
    static Map<String, String> chosen(Topology topo, Netns clients, List<String> ips, int endpoints) throws Exception {
        Map<String, String> out = AffinityAcrossChangesKernelTest.chosen(topo, clients, ips, "10.96.0.51");
        out.forEach((c, answeredBy) -> {
            int port = Integer.parseInt(answeredBy.substring(answeredBy.lastIndexOf(':') + 1));
            assertTrue(port >= FIRST_PORT && port < FIRST_PORT + endpoints, c + ": a current endpoint (" + endpoints + "): " + answeredBy);
        });
        return out;
    }

    @Test
    void stickyGroupsPastTheTreeAreDataAndKeepTheirClients() throws Exception {
        ProxyConfig cfg = AffinityAcrossChangesKernelTest.config();
        List<String> ips = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            ips.add("10.244.3." + (100 + i));
        }
        int k = NftRenderer.MAX_SHARED_PICK + 12;
        try (Topology topo = new Topology(); NftClient nft = NftClient.open(topo.node.ns())) {
            serve(topo, k + 1);
            Netns clients = topo.pod(ips.toArray(new String[0]));
            Syncer syncer = new Syncer(nft, new NftRenderer(cfg), "nftproxy");
            syncer.sync(sticky(k), null);
            String chains = topo.node.exec("nft", "list", "chains", "ip");
            assertFalse(chains.contains("svc-"), "no chain of its own");
            assertTrue(chains.contains("chain ip-sticky-check-129-256 "), chains);
            assertTrue(sets(topo).contains("set sticky-ips-ids-129-256 "), sets(topo));
            Map<String, String> before = chosen(topo, clients, ips, k);
            assertTrue(Set.copyOf(before.values()).size() >= 6, "12 clients spread over " + k + " endpoints: " + before);
            Topology.Outcome viaNodePort = topo.tcp(topo.ext, null, Topology.NODE_IP, 30051);
            assertEquals(ANSWERED, viaNodePort.result(), "the NodePort: " + viaNodePort);
            assertEquals(viaNodePort.answeredBy(), topo.tcp(topo.ext, null, Topology.NODE_IP, 30051).answeredBy(),
                    "the outside client sticks through the NodePort");

            // An endpoint added within the block: elements only, every client keeps its endpoint.
            SyncResult grown = syncer.sync(sticky(k + 1), Set.of(STICKY));
            assertEquals(0, grown.changedChains(), "an endpoint added to a sticky port past 128 changes no chain");
            assertEquals(before, chosen(topo, clients, ips, k + 1));

            // Out of the block: the chains of its numbers' range go with their last port; clients whose endpoint
            // stayed keep it, the others are picked for again among the current ones.
            int fewer = NftRenderer.MAX_SHARED_PICK - 8;
            syncer.sync(sticky(fewer), Set.of(STICKY));
            assertFalse(topo.node.exec("nft", "list", "chains", "ip").contains("ip-sticky-check-129-256"));
            assertFalse(sets(topo).contains("sticky-ips-ids-129-256"), sets(topo));
            Map<String, String> after = chosen(topo, clients, ips, fewer);
            for (String c : ips) {
                int had = Integer.parseInt(before.get(c).substring(before.get(c).lastIndexOf(':') + 1));
                if (had < FIRST_PORT + fewer) {
                    assertEquals(before.get(c), after.get(c), "client " + c + " keeps its endpoint, which stayed");
                }
            }
        }
    }
}
