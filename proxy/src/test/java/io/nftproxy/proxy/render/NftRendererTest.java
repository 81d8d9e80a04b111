package io.nftproxy.proxy.render;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.render.CountedSets;
import io.nftproxy.proxy.render.TableNames;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.print.NftPrinter;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.netlink.nft.print.ValueFormat;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Numgen;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.sync.Syncer;

/** The ruleset layout: what one service costs and what each policy renders to. */
class NftRendererTest {
    static final ProxyConfig CFG = ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse("192.168.50.2")))
            .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16")))
            .build();
    static final NodeInfo NODE = new NodeInfo("node-a", null, List.of(), false);

    static ServicePort svc(String name, String ip, int nodePort, boolean eLocal, int affinity) {
        return ServicePort.builder(new ServicePortName("default", name, "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse(ip))).nodePort(nodePort).externalPolicyLocal(eLocal)
                .affinitySeconds(affinity).build();
    }

    static List<Endpoint> eps(int n, String node) {
        List<Endpoint> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(Endpoint.ready(Inet.parse("10.244.1." + (i + 2)), 8080, node));
        }
        return out;
    }

    /**
     * A state whose ports pick through every tree, in every bucket of counts: per bucket a
     * ClusterIP, an external IP and a NodePort of policy Local, with one endpoint elsewhere and
     * 1, 9, 17, 33 or 65 here (trees, and their buckets' chains, are declared while used).
     */
    static ProxyState everyTree() {
        Map<ServicePortName, ServicePort> ports = new HashMap<>();
        Map<ServicePortName, List<Endpoint>> endpoints = new HashMap<>();
        for (int here : List.of(1, 9, 17, 33, 65)) {
            ServicePort port = svc("every-tree-" + here, "10.96.0." + (100 + here), 30100 + here, true, 0).toBuilder()
                    .externalIPs(List.of(Inet.parse("203.0.113." + (100 + here)))).build();
            List<Endpoint> eps = new ArrayList<>(eps(1, "node-b"));
            for (int i = 0; i < here; i++) {
                eps.add(Endpoint.ready(Inet.parse("10.244.0." + (2 + i)), 8080, "node-a"));
            }
            ports.put(port.id(), port);
            endpoints.put(port.id(), eps);
        }
        return new ProxyState(ports, endpoints, NODE);
    }

    static ProxyState state(ServicePort... services) {
        TreeMap<ServicePortName, ServicePort> m = new TreeMap<>();
        Map<ServicePortName, List<Endpoint>> e = new HashMap<>();
        for (ServicePort s : services) {
            m.put(s.id(), s);
            e.put(s.id(), eps(3, "node-b"));
        }
        return new ProxyState(m, e, NODE);
    }

    @Test
    void aPlainServiceIsOnlyElementsOfSharedMaps() {
        NftRenderer r = new NftRenderer(CFG);
        Fragment f = r.service(IpFamily.V4, svc("web", "10.96.0.10", 30080, false, 0), eps(4, "node-b"), NODE);
        assertTrue(f.chains().isEmpty(), "no chain of its own: changing it never changes a rule");
        assertTrue(f.sets().isEmpty(), "no set of its own");
        assertEquals(List.of("10.96.0.10 . tcp . 80"), keys(f, TableNames.SERVICE_IPS));
        assertEquals(1, f.elements().get(TableNames.SERVICE_NODEPORTS).size());
        // Four endpoints: 4 - 1 = 0b11, bits 0 and 1, for the IP port and the NodePort.
        assertEquals(List.of("10.96.0.10 . tcp . 80"), keys(f, "ip-count-bit-0"));
        assertEquals(List.of("10.96.0.10 . tcp . 80"), keys(f, "ip-count-bit-1"));
        assertEquals(1, f.elements().get("nodeport-count-bit-0").size());
        assertEquals(1, f.elements().get("nodeport-count-bit-1").size());
        for (int bit = 2; bit < 7; bit++) {
            assertFalse(f.elements().containsKey("ip-count-bit-" + bit), "bit " + bit);
            assertFalse(f.elements().containsKey("nodeport-count-bit-" + bit), "bit " + bit);
        }
        f.elements().forEach((set, els) -> els.forEach(e -> assertFalse(e.data() instanceof Verdict,
                set + ": no verdict, so changing it makes the kernel validate no chain")));
        List<SetElement> members = f.elements().get("service-endpoints-1-8");
        assertEquals(4, members.size(), "in the map of 1 to 8 endpoints");
        Bytes front = Bytes.concat(Bytes.ip("10.96.0.10"), Bytes.u8(6).padTo4(), Bytes.be16(80).padTo4());
        for (int i = 0; i < 4; i++) {
            assertEquals(Bytes.concat(front, Bytes.host32(i)), members.get(i).key());
            assertEquals(Bytes.concat(Bytes.ip("10.244.1." + (i + 2)), Bytes.be16(8080).padTo4()),
                    ((Data.Value) members.get(i).data()).bytes());
        }
        assertEquals(4, f.elements().get("nodeport-endpoints-1-8").size());
        assertEquals(List.of("10.96.0.10 . tcp . 80"), keys(f, TableNames.CLUSTER_IP_PORTS));
        assertEquals(1, f.elements().get(TableNames.NODEPORT_MASQ).size(), "eTP Cluster NodePorts are masqueraded");
    }

    static List<String> keys(Fragment f, String set) {
        List<String> out = new ArrayList<>();
        for (SetElement e : f.elements().getOrDefault(set, List.of())) {
            out.add(ValueFormat.key(List.of(DataType.IPV4_ADDR,
                    DataType.INET_PROTO, DataType.INET_SERVICE), e.key()));
        }
        return out;
    }

    @Test
    void sharedPickChainsChooseUniformly() {
        Fragment g = new NftRenderer(CFG).globals(IpFamily.V4, everyTree());
        for (int k = 1; k <= NftRenderer.MAX_SHARED_PICK; k += 2) {
            // The last level tells k from k + 1 by bit 0 of the count minus one, and draws.
            assertEquals(List.of("ip daddr . meta l4proto . th dport @ip-count-bit-0 dnat ip to ip daddr . meta l4proto . th dport"
                            + " . numgen random mod " + (k + 1) + " map @service-endpoints-" + PickTree.bucket(k + 1),
                    "dnat ip to ip daddr . meta l4proto . th dport . numgen random mod " + k + " map @service-endpoints-" + PickTree.bucket(k)),
                    body(g, "ip-pick-" + k + "-" + (k + 1)));
            assertEquals(List.of("meta l4proto . th dport @nodeport-count-bit-0 dnat ip to meta l4proto . th dport . numgen random mod "
                            + (k + 1) + " map @nodeport-endpoints-" + PickTree.bucket(k + 1),
                    "dnat ip to meta l4proto . th dport . numgen random mod " + k + " map @nodeport-endpoints-" + PickTree.bucket(k)),
                    body(g, "nodeport-pick-" + k + "-" + (k + 1)));
        }
        assertEquals(2 * NftRenderer.MAX_SHARED_PICK - 1 - NftRenderer.MAX_SHARED_PICK,
                g.chains().keySet().stream().filter(c -> c.matches("ip-pick-\\d+-\\d+")).count(), "127 chains a tree");
    }

    /** A chain's rules as nft text. */
    static List<String> body(Fragment g, String chain) {
        return g.chains().get(chain).rules().stream().map(x -> NftPrinter.ruleBody(x, g.sets()::get)).toList();
    }

    /** The rule of the tree's last level that draws among k. */
    static String draw(Fragment g, String chain, int k) {
        return body(g, chain).stream().filter(x -> x.contains("numgen random mod " + k + " map @")).findFirst()
                .orElseThrow(() -> new AssertionError(chain + " draws among " + k + ": " + body(g, chain)));
    }

    /** {@code n} endpoints on node-b, over as many addresses as needed. */
    static List<Endpoint> manyEps(int n) {
        List<Endpoint> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(Endpoint.ready(Inet.parse("10." + (244 + i / 62_500) + "." + (1 + i / 250 % 250) + "." + (2 + i % 250)),
                    8080, "node-b"));
        }
        return out;
    }

    /** Walks a tree as the kernel would for a port that is a member of {@code member}'s sets: to the last level it reaches. */
    static String walk(Fragment g, String root, Predicate<String> member) {
        String chain = root;
        while (body(g, chain).stream().anyMatch(x -> x.contains("goto "))) {
            String next = null;
            for (String rule : g.chains().get(chain).rules().stream().map(x -> NftPrinter.ruleBody(x, g.sets()::get)).toList()) {
                Matcher m = Pattern.compile("(?:@(\\S+) )?goto (\\S+)$").matcher(rule);
                assertTrue(m.find(), rule);
                if (m.group(1) == null || member.test(m.group(1))) {
                    next = m.group(2);
                    break;
                }
            }
            chain = next;
        }
        return chain;
    }

    @Test
    void endpointMapsAreSplitByCountSoThatFewRulesLookEachUp() {
        Map<Integer, String> buckets = new java.util.LinkedHashMap<>();
        for (int k = 1; k <= 8; k++) {
            buckets.put(k, "1-8");
        }
        buckets.putAll(Map.of(9, "9-16", 16, "9-16", 17, "17-32", 64, "33-64", 65, "65-128", 128, "65-128"));
        buckets.put(129, "129-256");
        buckets.put(NftRenderer.MAX_PLAIN_PICK, (NftRenderer.MAX_PLAIN_PICK - 127) + "-" + NftRenderer.MAX_PLAIN_PICK);
        buckets.put(NftRenderer.MAX_PLAIN_PICK + 1, "1025-1152");
        buckets.put(NftRenderer.MAX_TREE_PICK, (NftRenderer.MAX_TREE_PICK - 127) + "-" + NftRenderer.MAX_TREE_PICK);
        buckets.forEach((k, b) -> assertEquals(b, PickTree.bucket(k), k + " endpoints"));
        assertThrows(IllegalArgumentException.class, () -> PickTree.bucket(NftRenderer.MAX_TREE_PICK + 1));
        // Past the root's blocks, the maps' names are read, not listed: only a block's own name is one.
        assertEquals(PickTree.Kind.IP, PickTree.treeOfMap("service-endpoints-1025-1152"));
        assertEquals(PickTree.Kind.NODEPORT, PickTree.treeOfMap("nodeport-endpoints-65409-65536"));
        for (String not : List.of("service-endpoints-1025-1153", "service-endpoints-1024-1151", "service-endpoints-65537-65664",
                "service-endpoints-1025-", "service-endpoints--1152", "local-endpoints-1025-1152", "service-endpoints-1025-1152x")) {
            assertEquals(null, PickTree.treeOfMap(not), not);
            assertFalse(NftRenderer.isOnDemandSet(not), not);
        }

        // The kernel checks an element added to a map against every rule looking the map up: count them.
        NftRenderer r = new NftRenderer(CFG);
        ServicePort ten = svc("ten", "10.96.0.30", 30030, false, 600);
        ServicePort large = svc("large", "10.96.0.31", 0, false, 0);
        ServicePort small = svc("small", "10.96.0.32", 0, false, 0);
        ProxyState st = new ProxyState(Map.of(ten.id(), ten, large.id(), large, small.id(), small),
                Map.of(ten.id(), manyEps(10), large.id(), manyEps(200), small.id(), manyEps(3)), NODE);
        Fragment g = r.globals(IpFamily.V4, st);
        Map<String, Integer> lookups = new HashMap<>();
        Pattern ref = Pattern.compile("@(\\S+)");
        g.chains().values().forEach(c -> c.rules().forEach(x -> {
            Matcher m = ref.matcher(NftPrinter.ruleBody(x, g.sets()::get));
            while (m.find()) {
                lookups.merge(m.group(1), 1, Integer::sum);
            }
        }));
        assertEquals(8, lookups.get("service-endpoints-1-8"), "8 leaves");
        assertEquals(8, lookups.get("service-endpoints-9-16"), "8 leaves");
        assertEquals(16, lookups.get("ip-sticky-endpoints-9-16"), "the 16 slots of the sticky port's numbers");
        assertEquals(NftRenderer.MAX_SHARED_PICK, lookups.get("service-endpoints-129-256"), "the block's leaves");
        for (String map : g.sets().keySet()) {
            if (TableNames.endpointMapBase(map) != null) {
                assertTrue(lookups.get(map) <= NftRenderer.MAX_SHARED_PICK / 2 + NftRenderer.MAX_SHARED_PICK, map + ": " + lookups.get(map));
            }
        }
        assertFalse(g.sets().containsKey("service-endpoints-257-384"), "no map for a block nobody is in");
        assertFalse(g.sets().containsKey("service-endpoints-17-32"), "nor for a bucket nobody is in");
        assertFalse(g.chains().containsKey("ip-pick-17-32"), "nor its leaves and the chains to them");
        assertFalse(g.chains().containsKey("ip-pick-33-64"));
        assertTrue(g.chains().containsKey("ip-pick-9-16") && g.chains().containsKey("ip-pick-1-8"));
        assertEquals(TableNames.SERVICE_ENDPOINTS, TableNames.endpointMapBase("service-endpoints-1-8"));
        assertEquals(null, TableNames.endpointMapBase("service-endpoints-1-1"));
        assertEquals(TableNames.NODEPORT_LOCAL_ENDPOINTS, TableNames.endpointMapBase("nodeport-local-endpoints-897-1024"));
        assertEquals(TableNames.SERVICE_ENDPOINTS, TableNames.endpointMapBase("ip-sticky-endpoints-1-8"),
                "a connection sent to a remembered endpoint counts as one drawn");
        assertEquals(null, TableNames.endpointMapBase(TableNames.SERVICE_ENDPOINTS_CHECK));
        assertTrue(CountedSets.endpointCountedSets().contains("nodeport-endpoints-65-128"), "endpoint counters read every endpoint map");

        // A port's endpoints are in its count's map; past the bucket they move to the next one.
        Fragment sixteen = r.service(IpFamily.V4, ten, manyEps(16), NODE);
        Fragment seventeen = r.service(IpFamily.V4, ten, manyEps(17), NODE, sixteen);
        assertEquals(16, sixteen.elements().get("service-endpoints-9-16").size());
        assertEquals(16, sixteen.elements().get("nodeport-endpoints-9-16").size());
        assertFalse(seventeen.elements().containsKey("service-endpoints-9-16"), "moved");
        assertEquals(17, seventeen.elements().get("service-endpoints-17-32").size());
        assertEquals(17, seventeen.elements().get("ip-sticky-endpoints-17-32").size(), "its numbers' range moved with it");
    }

    @Test
    void largerGroupsArePickedInBlocksOfTheTreeDeclaredWhileUsed() {
        NftRenderer r = new NftRenderer(CFG);
        int k = 2 * NftRenderer.MAX_SHARED_PICK + 44; // k - 1 = 128 * 2 + 43: block 2, bits 0, 1, 3 and 5
        ServicePort big = ServicePort.builder(new ServicePortName("default", "big", "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.20"))).nodePort(30020).build();
        Fragment f = r.service(IpFamily.V4, big, manyEps(k), NODE);
        assertTrue(f.chains().isEmpty(), "no chain of its own: " + f.chains().keySet());
        assertEquals(Set.of("ip-count-block-2", "nodeport-count-block-2", "service-endpoints-257-384", "nodeport-endpoints-257-384",
                "service-endpoints-1-8", "nodeport-endpoints-1-8", "tree:ip", "tree:nodeport"), f.demands(),
                "its blocks and their maps, the trees it picks through and their smallest bucket");
        for (int bit = 0; bit < 7; bit++) {
            boolean set = (43 & 1 << bit) != 0;
            assertEquals(set, keys(f, "ip-count-bit-" + bit).contains("10.96.0.20 . tcp . 80"), "bit " + bit);
        }
        assertEquals(k, f.elements().get("service-endpoints-257-384").size(), "one element an index, in the block's map");

        ServicePort small = ServicePort.builder(new ServicePortName("default", "small", "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.22"))).nodePort(30022).build();
        ProxyState st = new ProxyState(Map.of(big.id(), big, small.id(), small), Map.of(big.id(), manyEps(k), small.id(), manyEps(3)), NODE);
        Fragment g = r.globals(IpFamily.V4, st);
        assertEquals(Set.of("ip-count-block-2", "nodeport-count-block-2", "service-endpoints-257-384", "nodeport-endpoints-257-384",
                        "service-endpoints-1-8", "nodeport-endpoints-1-8", "tree:ip", "tree:nodeport"), g.declares(),
                "only the block and the bucket in use, only for the kinds that use them");
        Set<String> in = new HashSet<>(f.demands());
        for (String kind : List.of("ip", "nodeport")) {
            Predicate<String> member = set -> in.contains(set)
                    || set.startsWith(kind + "-count-bit-") && (43 & 1 << Integer.parseInt(set.substring(set.length() - 1))) != 0;
            String leaf = walk(g, kind + "-pick-1-" + NftRenderer.MAX_SHARED_PICK, member);
            assertEquals(kind + "-pick-" + (k - 1) + "-" + k, leaf, "k - 1 = 299: bit 0 set, the upper count");
            assertTrue(draw(g, leaf, k).contains("@" + kind + "-count-bit-0 "), "the last level draws among k: " + body(g, leaf));
            assertEquals(kind + "-pick-3-4", walk(g, kind + "-pick-1-" + NftRenderer.MAX_SHARED_PICK,
                    set -> set.equals(kind + "-count-bit-1")), "a small port still reaches its leaf");
        }
        Fragment none = r.globals(IpFamily.V4, new ProxyState(Map.of(), Map.of(), NODE));
        assertEquals(Set.of(), none.declares(), "no block and no tree without a port in it");
        assertFalse(none.chains().containsKey("ip-pick-1-" + NftRenderer.MAX_SHARED_PICK));
        assertFalse(none.chains().containsKey(PickTree.Kind.IP.leaf(k)));
    }

    @Test
    void groupsPastTheRootsBlocksAreSentToTheirBlockByAVerdictElement() {
        NftRenderer r = new NftRenderer(CFG);
        int k = 8 * NftRenderer.MAX_SHARED_PICK + 76; // k - 1 = 128 * 8 + 75: block 8, bits 0, 1, 3 and 6
        ServicePort big = ServicePort.builder(new ServicePortName("default", "big", "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.20"))).nodePort(30020).build();
        Fragment f = r.service(IpFamily.V4, big, manyEps(k), NODE);
        assertTrue(f.chains().isEmpty(), "no chain of its own: " + f.chains().keySet());
        assertEquals(Set.of("service-endpoints-1025-1152", "nodeport-endpoints-1025-1152", "service-endpoints-1-8",
                "nodeport-endpoints-1-8", "tree:ip", "tree:nodeport", TableNames.SERVICE_CHAINS, TableNames.NODEPORT_CHAINS,
                TableNames.NODEPORT_EXTERNAL_LOCAL_BLOCKS), f.demands(),
                "its blocks' maps, the verdict maps (the NodePort's in the external chain's too), the trees and their smallest bucket");
        assertEquals(List.of("10.96.0.20 . tcp . 80"), keys(f, TableNames.SERVICE_CHAINS));
        assertEquals(List.of(Verdict.goTo("ip-pick-1025-1152")),
                f.elements().get(TableNames.SERVICE_CHAINS).stream().map(SetElement::data).toList());
        assertEquals(List.of(Verdict.goTo("nodeport-pick-1025-1152")),
                f.elements().get(TableNames.NODEPORT_CHAINS).stream().map(SetElement::data).toList());
        assertTrue(keys(f, TableNames.SERVICE_IPS).contains("10.96.0.20 . tcp . 80"), "among the frontends services sends on");
        assertFalse(f.elements().keySet().stream().anyMatch(set -> set.contains("-count-block-")), "in no block set");
        for (int bit = 0; bit < 7; bit++) {
            assertEquals((75 & 1 << bit) != 0, keys(f, "ip-count-bit-" + bit).contains("10.96.0.20 . tcp . 80"), "bit " + bit);
        }
        assertEquals(k, f.elements().get("service-endpoints-1025-1152").size(), "one element an index, in the block's map");

        ProxyState st = new ProxyState(Map.of(big.id(), big), Map.of(big.id(), manyEps(k)), NODE);
        Fragment g = r.globals(IpFamily.V4, st);
        assertFalse(g.sets().containsKey("ip-count-block-8"), "no block set past the root's");
        assertEquals(127, g.chains().keySet().stream().filter(c -> {
            Matcher m = Pattern.compile("^ip-pick-(\\d+)-(\\d+)$").matcher(c);
            return m.find() && Integer.parseInt(m.group(1)) > 1024;
        }).count(), "the block's whole tree");
        assertTrue(body(g, "services").stream().anyMatch(x -> x.contains("vmap @" + TableNames.SERVICE_CHAINS)), String.valueOf(body(g, "services")));
        Set<String> in = new HashSet<>(f.demands());
        for (String kind : List.of("ip", "nodeport")) {
            Predicate<String> member = set -> in.contains(set)
                    || set.startsWith(kind + "-count-bit-") && (75 & 1 << Integer.parseInt(set.substring(set.length() - 1))) != 0;
            String leaf = walk(g, kind + "-pick-1025-1152", member);
            assertEquals(kind + "-pick-" + (k - 1) + "-" + k, leaf, "k - 1 = 1099: bit 0 set, the upper count");
            assertTrue(draw(g, leaf, k).contains("@" + kind + "-count-bit-0 "), "the last level draws among k: " + body(g, leaf));
            assertTrue(g.chains().get(kind + "-pick-1-" + NftRenderer.MAX_SHARED_PICK).rules().stream()
                    .noneMatch(x -> NftPrinter.ruleBody(x, g.sets()::get).contains("1025")), "the root asks for no block past its own");
        }

        // With affinity: chains of their own (a rule per endpoint checks a sticky port's clients,
        // as kube-proxy's do); past the last block, too.
        ServicePort sticky = ServicePort.builder(big.id(), 80).clusterIPs(big.clusterIPs()).affinitySeconds(600).build();
        assertFalse(r.service(IpFamily.V4, sticky, manyEps(NftRenderer.MAX_PLAIN_PICK + 1), NODE).chains().isEmpty(), "sticky");
        assertTrue(r.service(IpFamily.V4, big, manyEps(NftRenderer.MAX_PLAIN_PICK), NODE).elements()
                .containsKey("ip-count-block-7"), "up to 1,024, the root's blocks");
        assertFalse(r.service(IpFamily.V4, big, manyEps(NftRenderer.MAX_TREE_PICK + 1), NODE).chains().isEmpty(),
                "past the last block: chains of its own");
    }

    /**
     * External traffic policy Local past 1,024 cluster endpoints: its ClusterIP as a plain port's,
     * its external frontends in the local sets, the cluster count's block reached by this node's
     * pods and the node itself through the external chain's verdict map; with more than 1,024
     * endpoints on this node, chains of its own.
     */
    @Test
    void localPortsPastTheRootsBlocksReachTheirClusterBlockByAVerdictElement() {
        NftRenderer r = new NftRenderer(CFG);
        int k = 8 * NftRenderer.MAX_SHARED_PICK + 76;
        List<Endpoint> eps = new ArrayList<>(manyEps(k));
        for (int i = 0; i < 3; i++) {
            eps.set(i, Endpoint.ready(eps.get(i).address(), 8080, "node-a")); // three here
        }
        ServicePort local = ServicePort.builder(new ServicePortName("default", "big-local", "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.20"))).externalIPs(List.of(Inet.parse("198.51.100.20")))
                .nodePort(30020).externalPolicyLocal(true).build();
        Fragment f = r.service(IpFamily.V4, local, eps, NODE);
        assertTrue(f.chains().isEmpty(), "no chain of its own: " + f.chains().keySet());
        assertEquals(List.of("10.96.0.20 . tcp . 80", "198.51.100.20 . tcp . 80"), keys(f, TableNames.SERVICE_CHAINS),
                "the ClusterIP, plain, and the external IP (asked for after local-ips: for a flip of the policy)");
        assertEquals(List.of(Verdict.goTo("ip-pick-1025-1152"), Verdict.goTo("ip-pick-1025-1152")),
                f.elements().get(TableNames.SERVICE_CHAINS).stream().map(SetElement::data).toList());
        assertEquals(List.of("198.51.100.20 . tcp . 80"), keys(f, TableNames.IP_EXTERNAL_LOCAL_BLOCKS));
        assertEquals(List.of(Verdict.goTo("ip-pick-1025-1152")),
                f.elements().get(TableNames.IP_EXTERNAL_LOCAL_BLOCKS).stream().map(SetElement::data).toList());
        assertEquals(List.of(Verdict.goTo("nodeport-pick-1025-1152")),
                f.elements().get(TableNames.NODEPORT_EXTERNAL_LOCAL_BLOCKS).stream().map(SetElement::data).toList());
        assertEquals(List.of("198.51.100.20 . tcp . 80"), keys(f, TableNames.LOCAL_IPS));
        assertEquals(3, f.elements().get("local-endpoints-1-8").stream()
                .filter(e -> e.key().slice(0, 4).equals(Bytes.ip("198.51.100.20"))).count(), "this node's three");
        assertEquals(2 * k, f.elements().get("service-endpoints-1025-1152").size(), "the ClusterIP's and the external IP's");

        ProxyState st = new ProxyState(Map.of(local.id(), local), Map.of(local.id(), eps), NODE);
        Fragment g = r.globals(IpFamily.V4, st);
        List<String> external = body(g, TableNames.IP_EXTERNAL_LOCAL);
        int toBlock = -1;
        int toRoot = -1;
        for (int i = 0; i < external.size(); i++) {
            if (external.get(i).startsWith("ip saddr @cluster-cidrs ip daddr . meta l4proto . th dport vmap @ip-external-local-blocks")) {
                toBlock = i;
            }
            if (external.get(i).equals("ip saddr @cluster-cidrs goto ip-pick-1-128")) {
                toRoot = i;
            }
        }
        assertTrue(toBlock >= 0 && toBlock < toRoot, "pods to the block before the root: " + external);
        assertTrue(external.stream().anyMatch(x -> x.startsWith("fib saddr type local ip daddr . meta l4proto . th dport vmap")),
                "the node too: " + external);
        assertTrue(body(g, TableNames.NODEPORT_EXTERNAL_LOCAL).stream().anyMatch(x -> x.contains("vmap @nodeport-external-local-blocks")));
        assertTrue(g.chains().containsKey("ip-pick-1025-1152"));

        List<Endpoint> allHere = new ArrayList<>();
        for (Endpoint e : eps) {
            allHere.add(Endpoint.ready(e.address(), 8080, "node-a"));
        }
        assertFalse(r.service(IpFamily.V4, local, allHere, NODE).chains().isEmpty(), "past 1,024 on this node: chains of its own");
        ServicePort plain = ServicePort.builder(local.id(), 80).clusterIPs(local.clusterIPs()).build();
        Fragment none = r.globals(IpFamily.V4, new ProxyState(Map.of(plain.id(), plain), Map.of(plain.id(), eps), NODE));
        assertFalse(none.sets().containsKey(TableNames.IP_EXTERNAL_LOCAL_BLOCKS), "only while some frontend is in it: "
                + "a ClusterIP is none");
    }

    @Test
    void stickyPortsPastTheTreeAreDataWithTheChainsOfTheirRangeDeclaredWhileUsed() {
        NftRenderer r = new NftRenderer(CFG);
        int k = NftRenderer.MAX_SHARED_PICK + 3; // block 1, k - 1 = 128 + 2: bit 1
        ServicePort stickyBig = ServicePort.builder(new ServicePortName("default", "sticky-big", "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.21"))).nodePort(30021).affinitySeconds(600).build();
        Fragment f = r.service(IpFamily.V4, stickyBig, manyEps(k), NODE);
        assertTrue(f.chains().isEmpty(), "no chain of its own: " + f.chains().keySet());
        // A block brings its tree's smallest bucket too: a packet its root finds in no block set
        // still has a last level to go to (render/Transitions).
        assertEquals(Set.of("ip-count-block-1", "nodeport-count-block-1", "service-endpoints-129-256", "nodeport-endpoints-129-256",
                "service-endpoints-1-8", "nodeport-endpoints-1-8",
                "sticky-ips-ids-129-256", "sticky-nodeports-ids-129-256", "tree:ip", "tree:nodeport"), f.demands());
        assertEquals(List.of("10.96.0.21 . tcp . 80"), keys(f, "sticky-ips-ids-129-256"));
        assertEquals(List.of("10.96.0.21 . tcp . 80"), keys(f, "sticky-ips-600"));
        assertEquals(k, f.elements().get("service-endpoints-129-256").size());
        assertEquals(k, f.elements().get("ip-sticky-endpoints-129-256").size());

        ProxyState st = new ProxyState(Map.of(stickyBig.id(), stickyBig), Map.of(stickyBig.id(), manyEps(k)), NODE);
        Fragment g = r.globals(IpFamily.V4, st);
        assertEquals(f.demands(), g.declares());
        Function<String, List<String>> body = chain -> g.chains().get(chain).rules().stream()
                .map(x -> NftPrinter.ruleBody(x, g.sets()::get)).toList();
        // The root sends sticky ports to the check of their range before the block; the block's
        // last level draws; a port in no block set goes on to the smallest bucket.
        assertEquals(List.of("ip daddr . meta l4proto . th dport @sticky-ips jump ip-sticky-check",
                "ip daddr . meta l4proto . th dport @ip-count-block-1 goto ip-pick-129-256", "goto ip-pick-1-8"),
                body.apply("ip-pick-1-128"));
        assertEquals(List.of("ip daddr . meta l4proto . th dport @ip-count-bit-0 dnat ip to ip daddr . meta l4proto . th dport . numgen random mod "
                        + (k + 1) + " map @service-endpoints-129-256",
                "dnat ip to ip daddr . meta l4proto . th dport . numgen random mod " + k + " map @service-endpoints-129-256"),
                body.apply(PickTree.Kind.IP.leaf(k)));
        assertEquals(List.of("ip daddr . meta l4proto . th dport @sticky-ips-ids-129-256 goto ip-sticky-check-129-256"),
                body.apply("ip-sticky-check"));
        // The check covers every number of the range (a client may remember any), in order.
        List<String> check = body.apply("ip-sticky-check-129-256");
        assertEquals(2 * NftRenderer.MAX_SHARED_PICK, check.size());
        assertEquals("ip saddr . ip daddr . meta l4proto . th dport . 0x000000ff @ip-affinity jump ip-sticky-129-256-slot-255",
                check.get(255));
        assertEquals(List.of("dnat ip to ip daddr . meta l4proto . th dport . 0x00000080 map @ip-sticky-endpoints-129-256",
                "delete @ip-affinity { ip saddr . ip daddr . meta l4proto . th dport . 0x00000080 }"),
                body.apply("ip-sticky-129-256-slot-128"));
        // The remembering tree reads the 8 bits of 256 numbers.
        assertTrue(g.chains().containsKey("ip-sticky-remember-0-255") && g.sets().containsKey("ip-sticky-id-bit-7"));
        assertFalse(g.sets().containsKey("ip-sticky-id-bit-8"));

        // A plain port in the block and a small sticky one: the block's tree, the small range's chains.
        ServicePort plainBig = ServicePort.builder(new ServicePortName("default", "big", "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.20"))).build();
        ServicePort small = ServicePort.builder(new ServicePortName("default", "small", "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.22"))).affinitySeconds(600).build();
        ProxyState mixed = new ProxyState(Map.of(plainBig.id(), plainBig, small.id(), small),
                Map.of(plainBig.id(), manyEps(k), small.id(), manyEps(2)), NODE);
        Fragment h = r.globals(IpFamily.V4, mixed);
        assertEquals(Set.of("ip-count-block-1", "service-endpoints-129-256", "service-endpoints-1-8", "sticky-ips-ids-1-8", "tree:ip"),
                h.declares());
        assertFalse(h.chains().containsKey("ip-sticky-check-129-256"), "no sticky port in the range: none of its chains");
        assertTrue(h.chains().containsKey("ip-sticky-check-1-8"));
        assertFalse(h.chains().containsKey("ip-sticky-check-9-16"), "nor of a range no sticky port is in");
        assertTrue(h.chains().containsKey("ip-sticky-remember-0-7") && !h.sets().containsKey("ip-sticky-id-bit-3"));
    }

    /**
     * A new connection that is to no service pays no FIB lookup: every rule that asks the FIB
     * whether the destination is this node's asks a NodePort set first. The verdict maps to
     * services with chains of their own, which cannot be asked first, come only with such a
     * service.
     */
    @Test
    void aPacketToNoServicePaysNoFibLookup() {
        NftRenderer r = new NftRenderer(CFG);
        ServicePort web = svc("web", "10.96.0.10", 30080, true, 0);
        Fragment g = r.globals(IpFamily.V4, new ProxyState(Map.of(web.id(), web), Map.of(web.id(), eps(3, "node-a")), NODE));
        for (String chain : List.of(TableNames.SERVICES, TableNames.NODEPORT_ENDPOINTS_CHECK)) {
            for (String rule : body(g, chain)) {
                if (rule.contains("fib daddr")) {
                    assertTrue(rule.matches("meta l4proto \\. th dport @[a-z-]+ fib daddr type local .*"), chain + ": " + rule);
                }
            }
        }
        assertFalse(g.sets().containsKey(TableNames.SERVICE_CHAINS) || g.sets().containsKey(TableNames.NODEPORT_CHAINS),
                "no service with chains of its own: no verdict map to them");
        assertTrue(body(g, TableNames.SERVICES).stream().noneMatch(x -> x.contains("vmap")), body(g, TableNames.SERVICES).toString());
        // The endpoint checks: one lookup, then the chain that tells reject from drop for the frontends in it.
        assertEquals(List.of("ip daddr . meta l4proto . th dport @unserved-ips goto service-endpoints-unserved"),
                body(g, TableNames.SERVICE_ENDPOINTS_CHECK));
        assertEquals(List.of("meta l4proto . th dport @unserved-nodeports fib daddr type local ip daddr @nodeport-addresses"
                + " goto nodeport-endpoints-unserved"), body(g, TableNames.NODEPORT_ENDPOINTS_CHECK));
        assertEquals(List.of("meta l4proto . th dport @nodeport-no-endpoint-reject reject with icmp type port-unreachable",
                "meta l4proto . th dport @nodeport-no-endpoint-drop drop"), body(g, TableNames.NODEPORT_ENDPOINTS_UNSERVED));
        Fragment none = r.service(IpFamily.V4, web, List.of(), NODE);
        assertEquals(keys(none, TableNames.NO_ENDPOINT_REJECT), keys(none, TableNames.UNSERVED_IPS), "a rejected frontend is unserved");
        assertEquals(List.of("10.96.0.10 . tcp . 80"), keys(none, TableNames.UNSERVED_IPS));
        assertEquals(1, none.elements().get(TableNames.UNSERVED_NODEPORTS).size());

        ServicePort big = svc("big", "10.96.0.11", 30081, false, 0);
        ProxyState both = new ProxyState(Map.of(web.id(), web, big.id(), big),
                Map.of(web.id(), eps(3, "node-a"), big.id(), manyEps(NftRenderer.MAX_PLAIN_PICK + 1)), NODE);
        Fragment h = r.globals(IpFamily.V4, both);
        assertTrue(h.sets().containsKey(TableNames.SERVICE_CHAINS) && h.sets().containsKey(TableNames.NODEPORT_CHAINS));
        assertEquals(List.of("ip daddr . meta l4proto . th dport vmap @service-chains",
                        "fib daddr type local ip daddr @nodeport-addresses meta l4proto . th dport vmap @nodeport-chains"),
                body(h, TableNames.SERVICES).stream().filter(x -> x.contains("vmap")).toList(),
                "with a service past the shared trees: its chains reached through them");
    }

    @Test
    void aTreeHoldsOnlyTheChainsThatLeadToTheBucketsInUse() {
        NftRenderer r = new NftRenderer(CFG);
        ServicePort small = svc("small", "10.96.0.40", 0, false, 0);
        ServicePort ten = svc("ten", "10.96.0.41", 0, false, 0);
        Predicate<String> ipTree = c -> c.matches("ip-pick-\\d+-\\d+");
        Fragment one = r.globals(IpFamily.V4, new ProxyState(Map.of(small.id(), small), Map.of(small.id(), manyEps(3)), NODE));
        // The root, then 1-8's subtree: 1-8, 1-4, 5-8 and four leaves. 1-64, 1-32 and 1-16 would
        // each test a bit no port in use has: the root goes straight to 1-8.
        assertEquals(8, one.chains().keySet().stream().filter(ipTree).count(), one.chains().keySet().toString());
        assertEquals(List.of("goto ip-pick-1-8"), body(one, "ip-pick-1-128"), "no upper half in use: no test");
        assertFalse(one.chains().containsKey("ip-pick-1-16"));
        assertEquals(Set.of("service-endpoints-1-8"), one.sets().keySet().stream().filter(m -> m.startsWith("service-endpoints-"))
                .collect(java.util.stream.Collectors.toSet()));

        Fragment two = r.globals(IpFamily.V4, new ProxyState(Map.of(small.id(), small, ten.id(), ten),
                Map.of(small.id(), manyEps(3), ten.id(), manyEps(10)), NODE));
        assertEquals(8 + 1 + 7, two.chains().keySet().stream().filter(ipTree).count(), "1-16 and 9-16's subtree come with its first port");
        assertEquals(List.of("goto ip-pick-1-16"), body(two, "ip-pick-1-128"));
        assertEquals(List.of("ip daddr . meta l4proto . th dport @ip-count-bit-3 goto ip-pick-9-16", "goto ip-pick-1-8"),
                body(two, "ip-pick-1-16"));
        assertTrue(two.sets().containsKey("service-endpoints-9-16"));
        // From the root to the leaf of 10: a lookup for each bit that tells the counts in use apart.
        String chain = "ip-pick-1-128";
        int hops = 0;
        while (body(two, chain).get(0).contains(" goto ") || body(two, chain).get(0).startsWith("goto ")) {
            String first = body(two, chain).get(0);
            Matcher bit = Pattern.compile("@ip-count-bit-(\\d) goto (\\S+)$").matcher(first);
            chain = bit.find() && (9 & 1 << Integer.parseInt(bit.group(1))) != 0 ? bit.group(2)
                    : body(two, chain).get(body(two, chain).size() - 1).replace("goto ", "");
            hops++;
        }
        assertEquals("ip-pick-9-10", chain);
        assertEquals(4, hops, "the root's goto, then bits 3, 2 and 1 (bit 0 at the leaf)");
    }

    @Test
    void theTreeLeadsEveryEndpointCountToItsPickChain() {
        Fragment g = new NftRenderer(CFG).globals(IpFamily.V4, everyTree());
        for (String kind : List.of("ip", "nodeport", "ip-local", "nodeport-local")) {
            for (int k = 1; k <= NftRenderer.MAX_SHARED_PICK; k++) {
                // Walk the tree as the kernel would for a port in the bit sets of k - 1.
                String chain = kind + "-pick-1-" + NftRenderer.MAX_SHARED_PICK;
                int hops = 0;
                while (body(g, chain).get(0).contains(" goto ")) {
                    List<String> rules = body(g, chain);
                    assertEquals(2, rules.size(), chain);
                    Matcher test = Pattern.compile("@" + kind + "-count-bit-(\\d) goto (\\S+)$").matcher(rules.get(0));
                    assertTrue(test.find(), rules.get(0));
                    boolean member = (k - 1 & 1 << Integer.parseInt(test.group(1))) != 0;
                    chain = member ? test.group(2) : rules.get(1).replace("goto ", "");
                    hops++;
                }
                int lo = (k - 1) / 2 * 2 + 1;
                assertEquals(kind + "-pick-" + lo + "-" + (lo + 1), chain, kind + " with " + k + " endpoints");
                // The last level's bit-0 test, then the draw among k.
                String drawn = draw(g, chain, k);
                assertEquals((k - 1 & 1) != 0, drawn.contains("@" + kind + "-count-bit-0 "), drawn);
                hops++;
                assertEquals(7, hops, "one set lookup a bit");
            }
        }
    }

    @Test
    void theCostOfAServiceDoesNotGrowWithTheTable() {
        NftRenderer r = new NftRenderer(CFG);
        List<ServicePort> many = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            many.add(svc("s" + i, "10.96." + (i / 200) + "." + (i % 200 + 1), 0, false, 0));
        }
        TableContents small = synced(r, state(many.subList(0, 10).toArray(new ServicePort[0])));
        TableContents big = synced(r, state(many.toArray(new ServicePort[0])));
        assertEquals(small.sets().size(), big.sets().size(), "sets are global: their number is constant");
        assertEquals(small.chains().size(), big.chains().size(), "chains are global: 500 services add none");
        assertEquals(small.rules().size(), big.rules().size(), "nor any rule");
        assertEquals(500 * 3, big.elements().get("service-endpoints-1-8").size(), "only elements grow");
    }

    /** The IPv4 table as the daemon's sync writes {@code state}, kept by the in-memory kernel. */
    static TableContents synced(NftRenderer r, ProxyState state) {
        try {
            FakeNfTables fake = new FakeNfTables();
            new Syncer(fake, r, "nftproxy").sync(state, null);
            return fake.readTable(Family.IP, "nftproxy");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void externalPolicyLocalIsOnlyElementsCountedInBothTrees() {
        NftRenderer r = new NftRenderer(CFG);
        List<Endpoint> eps = new ArrayList<>(eps(1, "node-a"));
        eps.add(Endpoint.ready(Inet.parse("10.244.9.9"), 8080, "node-b"));
        Fragment f = r.service(IpFamily.V4, svc("np", "10.96.0.11", 30001, true, 0), eps, NODE);
        assertTrue(f.chains().isEmpty(), "no chain of its own: " + f.chains().keySet());
        Bytes np = MapKeys.nodePort(6, 30001);
        assertEquals(List.of(np), f.elements().get(TableNames.LOCAL_NODEPORTS).stream().map(SetElement::key).toList());
        assertEquals(List.of(np), f.elements().get("nodeport-count-bit-0").stream().map(SetElement::key).toList(),
                "two cluster endpoints: 2 - 1 in the cluster tree's bits");
        assertFalse(f.elements().containsKey("nodeport-local-count-bit-0"), "one local endpoint: 1 - 1, no bit");
        assertEquals(2, f.elements().get("nodeport-endpoints-1-8").size(), "pods and the node pick among all");
        assertEquals(List.of(Data.value(MapKeys.endpoint(Inet.parse("10.244.1.2"), 8080))),
                f.elements().get("nodeport-local-endpoints-1-8").stream().map(SetElement::data).toList(),
                "the rest among this node's");
        assertTrue(f.elements().get(TableNames.NODEPORT_MASQ) == null, "no masquerade for Local external traffic");
        assertEquals(List.of(np), f.elements().get(TableNames.SERVICE_NODEPORTS).stream().map(SetElement::key).toList(),
                "among the frontends services sends on, which asks the Local ones first");
        assertEquals(List.of(np), f.elements().get(TableNames.LOCAL_NODEPORTS).stream().map(SetElement::key).toList());
        assertFalse(f.elements().containsKey(TableNames.NODEPORT_NO_LOCAL_ENDPOINT));

        Fragment none = r.service(IpFamily.V4, svc("np", "10.96.0.11", 30001, true, 0), eps(2, "node-b"), NODE);
        assertEquals(List.of(np), none.elements().get(TableNames.NODEPORT_NO_LOCAL_ENDPOINT).stream().map(SetElement::key)
                .toList(), "none here: external traffic dropped");
        assertTrue(none.elements().keySet().stream().noneMatch(m -> TableNames.NODEPORT_LOCAL_ENDPOINTS.equals(
                TableNames.endpointMapBase(m))), "no local endpoint: " + none.elements().keySet());
    }

    @Test
    void theSharedLocalChainShortCircuitsPodsAndTheNode() {
        Fragment g = new NftRenderer(CFG).globals(IpFamily.V4, everyTree());
        assertEquals(List.of("ip saddr @cluster-cidrs goto nodeport-pick-1-128",
                        "fib saddr type local jump mark-for-masquerade", "fib saddr type local goto nodeport-pick-1-128",
                        "meta l4proto . th dport @nodeport-no-local-endpoint drop", "goto nodeport-local-pick-1-128"),
                g.chains().get(TableNames.NODEPORT_EXTERNAL_LOCAL).rules().stream()
                        .map(x -> NftPrinter.ruleBody(x, n -> null)).toList());
        assertEquals("ip daddr . meta l4proto . th dport @no-local-endpoint drop",
                NftPrinter.ruleBody(g.chains().get(TableNames.IP_EXTERNAL_LOCAL).rules().get(3), n -> null));
        for (int k = 1; k <= NftRenderer.MAX_SHARED_PICK; k++) {
            assertTrue(draw(g, PickTree.Kind.IP_LOCAL.leaf(k), k).endsWith("numgen random mod " + k
                    + " map @local-endpoints-" + PickTree.bucket(k)));
        }
    }

    @Test
    void externalPolicyLocalWithAffinityIsStickyInBothTrees() {
        NftRenderer r = new NftRenderer(CFG);
        List<Endpoint> eps = new ArrayList<>(eps(1, "node-a"));
        eps.add(Endpoint.ready(Inet.parse("10.244.9.9"), 8080, "node-b"));
        ServicePort port = svc("np", "10.96.0.11", 30001, true, 600);
        Fragment f = r.service(IpFamily.V4, port, eps, NODE);
        assertTrue(f.chains().isEmpty(), "no chain of its own: " + f.chains().keySet());
        Bytes np = MapKeys.nodePort(6, 30001);
        assertEquals(List.of(np), f.elements().get("sticky-nodeports-600").stream().map(SetElement::key).toList(),
                "pods and the node: remembered in the cluster tree");
        assertEquals(List.of(np), f.elements().get("sticky-local-nodeports-600").stream().map(SetElement::key).toList(),
                "the rest: in the local tree");
        Fragment g = r.globals(IpFamily.V4, new ProxyState(Map.of(port.id(), port), Map.of(port.id(), eps), NODE));
        assertEquals("meta l4proto . th dport @sticky-local-nodeports jump nodeport-local-sticky-check",
                body(g, "nodeport-local-pick-1-128").get(0), "the local tree's root checks its own memory first");
        assertEquals(List.of("meta l4proto . th dport @nodeport-local-count-bit-0 dnat ip to meta l4proto . th dport . numgen random mod 2"
                                + " map @nodeport-local-endpoints-1-8",
                        "dnat ip to meta l4proto . th dport . numgen random mod 1 map @nodeport-local-endpoints-1-8"),
                body(g, "nodeport-local-pick-1-2"));
        assertTrue(g.sets().containsKey("nodeport-local-affinity"), "its own memory of the local endpoints");
        assertEquals(1, f.elements().get("nodeport-local-sticky-endpoints-1-8").size(), "the one local endpoint, numbered");
        assertEquals(2, f.elements().get("nodeport-sticky-endpoints-1-8").size(), "both, numbered");
        Fragment clusterOnly = r.globals(IpFamily.V4, state(svc("np", "10.96.0.11", 30001, false, 600)));
        assertTrue(clusterOnly.chains().containsKey("nodeport-sticky-check"));
        assertFalse(clusterOnly.chains().containsKey("nodeport-local-sticky-check"),
                "the local trees' sticky chains only while a sticky port of policy Local is");
        assertFalse(clusterOnly.sets().containsKey("nodeport-local-affinity"));
    }

    @Test
    void loadBalancerSourceRangesAreElementsOfOneRangeSet() {
        NftRenderer r = new NftRenderer(CFG);
        ServicePort lb = svc("lb", "10.96.0.15", 30015, false, 0).toBuilder()
                .loadBalancerIPs(List.of(Inet.parse("203.0.113.15")))
                .loadBalancerSourceRanges(List.of(Cidr.parse("10.1.0.0/16"), Cidr.parse("10.0.0.0/8"),
                        Cidr.parse("192.168.50.0/24"), Cidr.parse("172.16.0.0/12"))).build();
        Fragment f = r.service(IpFamily.V4, lb, eps(2, "node-b"), NODE);
        assertTrue(f.chains().isEmpty(), "no chain of its own: " + f.chains().keySet());
        assertEquals(List.of("203.0.113.15 . tcp . 80"), keys(f, TableNames.FIREWALL_IPS));
        List<DataType> key = List.of(DataType.IPV4_ADDR, DataType.INET_PROTO, DataType.INET_SERVICE, DataType.IPV4_ADDR);
        // Merged (the kernel refuses nested ranges in one set): 10.1/16 inside 10/8; the node's
        // network holds its address, so the load-balancer IP is a source let in as well.
        assertEquals(List.of("203.0.113.15 . tcp . 80 . 10.0.0.0-10.255.255.255",
                        "203.0.113.15 . tcp . 80 . 172.16.0.0-172.31.255.255",
                        "203.0.113.15 . tcp . 80 . 192.168.50.0-192.168.50.255",
                        "203.0.113.15 . tcp . 80 . 203.0.113.15"),
                f.elements().get(TableNames.FIREWALL_ALLOW + 15).stream()
                        .map(e -> ValueFormat.keyRange(key, e.key(), e.keyEnd())).toList());

        assertTrue(f.demands().contains(TableNames.FIREWALL_ALLOW + 15), "its shard, declared while used");

        Fragment g = r.globals(IpFamily.V4, state(lb));
        // In the shard of the IP's last byte (15), reached through the map from the byte to the shard.
        assertEquals(List.of("ip daddr & 0.0.0.255 vmap @firewall-shards"), g.chains().get(TableNames.FIREWALL_CHECK).rules()
                .stream().map(x -> NftPrinter.ruleBody(x, g.sets()::get)).toList());
        assertEquals(1, g.elements().get(TableNames.FIREWALL_SHARD_MAP).size(), "the one shard in use");
        assertEquals(List.of("ip daddr . meta l4proto . th dport . ip saddr @firewall-allow-15 return",
                        "ip daddr . meta l4proto . th dport @firewall-ips drop"),
                g.chains().get("firewall-shard-15").rules().stream()
                        .map(x -> NftPrinter.ruleBody(x, g.sets()::get)).toList());
        assertFalse(g.chains().containsKey("firewall-shard-16") || g.sets().containsKey(TableNames.FIREWALL_ALLOW + 16));
        assertTrue(g.chains().get("filter-prerouting").rules().stream().map(x -> NftPrinter.ruleBody(x, g.sets()::get))
                .anyMatch(x -> x.equals("ct state new jump firewall-check")));

        // No source ranges anywhere: no shard, no map, no check, nothing for traffic to look up.
        Fragment none = r.globals(IpFamily.V4, new ProxyState(Map.of(), Map.of(), NODE));
        assertFalse(none.chains().containsKey(TableNames.FIREWALL_CHECK) || none.sets().containsKey(TableNames.FIREWALL_SHARD_MAP));
        assertTrue(none.chains().keySet().stream().noneMatch(c -> c.startsWith(TableNames.FIREWALL_SHARD)));
        assertTrue(none.chains().get("filter-prerouting").rules().isEmpty());
    }

    @Test
    void noEndpointsRejectsAndLocalPolicyWithoutLocalDrops() {
        NftRenderer r = new NftRenderer(CFG);
        Fragment none = r.service(IpFamily.V4, svc("none", "10.96.0.12", 30002, false, 0), List.of(), NODE);
        assertTrue(none.chains().isEmpty());
        assertEquals(1, none.elements().get(TableNames.NO_ENDPOINT_REJECT).size());
        assertEquals(1, none.elements().get(TableNames.NODEPORT_NO_ENDPOINT_REJECT).size());

        ServicePort itp = ServicePort.builder(new ServicePortName("default", "itp", "", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.13"))).internalPolicyLocal(true).build();
        Fragment f = r.service(IpFamily.V4, itp, eps(2, "node-b"), NODE);
        assertEquals(1, f.elements().get(TableNames.NO_ENDPOINT_DROP).size(), "iTP Local without local endpoints drops");
        assertFalse(f.elements().containsKey(TableNames.SERVICE_IPS));
    }

    @Test
    void aStickyServiceIsOnlyElementsAndItsClientsAreRememberedByTheirEndpointsNumber() {
        NftRenderer r = new NftRenderer(CFG);
        ServicePort sticky = svc("sticky", "10.96.0.14", 30014, false, 600);
        Fragment f = r.service(IpFamily.V4, sticky, eps(3, "node-b"), NODE);
        assertTrue(f.chains().isEmpty() && f.sets().isEmpty(), "no chain or set of its own: " + f.chains().keySet());
        for (Map.Entry<String, List<SetElement>> e : f.elements().entrySet()) {
            for (SetElement el : e.getValue()) {
                assertFalse(el.data() instanceof Verdict, "no verdict: " + e.getKey());
            }
        }
        assertEquals(List.of("10.96.0.14 . tcp . 80"), keys(f, "sticky-ips-600"));
        assertEquals(List.of("10.96.0.14 . tcp . 80"), keys(f, "sticky-ips"));
        assertEquals(List.of("10.96.0.14 . tcp . 80"), keys(f, "sticky-ips-ids-1-8"));
        assertEquals(1, f.elements().get("sticky-nodeports-600").size());
        // Each endpoint numbered, its pair with the frontend in the bit sets of its number (0, 1, 2).
        assertEquals(3, f.elements().get("ip-sticky-endpoints-1-8").size());
        assertEquals(3, f.elements().get("ip-sticky-pairs").size());
        assertEquals(1, f.elements().get("ip-sticky-id-bit-0").size());
        assertEquals(1, f.elements().get("ip-sticky-id-bit-1").size());

        Fragment g = r.globals(IpFamily.V4, state(sticky));
        Fragment none = r.globals(IpFamily.V4, new ProxyState(Map.of(), Map.of(), NODE));
        assertFalse(none.chains().containsKey("ip-sticky-check") || none.chains().containsKey(TableNames.STICKY_REMEMBER),
                "no sticky port: none of their chains");
        assertTrue(g.unmanagedSets().containsAll(List.of("ip-affinity", "nodeport-affinity")), "the kernel fills them");
        java.util.function.Function<String, List<String>> body = c -> g.chains().get(c).rules().stream()
                .map(x -> NftPrinter.ruleBody(x, g.sets()::get)).toList();
        // The tree's root sends a sticky port to the check of its numbers' range; if the check
        // returns, the port goes down the tree, whose leaf for 3 draws.
        assertEquals(List.of("ip daddr . meta l4proto . th dport @sticky-ips jump ip-sticky-check", "goto ip-pick-1-8"),
                body.apply("ip-pick-1-128"));
        assertEquals(List.of("ip daddr . meta l4proto . th dport @ip-count-bit-0 dnat ip to ip daddr . meta l4proto . th dport . numgen random mod 4 map @service-endpoints-1-8",
                "dnat ip to ip daddr . meta l4proto . th dport . numgen random mod 3 map @service-endpoints-1-8"), body.apply("ip-pick-3-4"));
        List<String> checks = body.apply("ip-sticky-check-1-8");
        assertEquals(8, checks.size());
        assertEquals("ip saddr . ip daddr . meta l4proto . th dport . 0x00000002 @ip-affinity jump ip-sticky-1-8-slot-2",
                checks.get(2));
        // The endpoint holding the number, or the entry goes and the check goes on.
        assertEquals(List.of("dnat ip to ip daddr . meta l4proto . th dport . 0x00000002 map @ip-sticky-endpoints-1-8",
                "delete @ip-affinity { ip saddr . ip daddr . meta l4proto . th dport . 0x00000002 }"),
                body.apply("ip-sticky-1-8-slot-2"));
        // After the DNAT: the endpoint's number read from the bit sets, remembered with the port's timeout.
        assertEquals(List.of("ct status ! dnat return",
                "ct original ip daddr . meta l4proto . ct original proto-dst . ip daddr . th dport @ip-sticky-pairs jump ip-sticky-remember-0-7",
                "ct original ip daddr . meta l4proto . ct original proto-dst != @service-ips meta l4proto . ct original proto-dst"
                        + " . ip daddr . th dport @nodeport-sticky-pairs jump nodeport-sticky-remember-0-7"),
                body.apply(TableNames.STICKY_REMEMBER));
        assertEquals(List.of("ct original ip daddr . meta l4proto . ct original proto-dst . ip daddr . th dport @ip-sticky-id-bit-2 goto ip-sticky-remember-4-7",
                "goto ip-sticky-remember-0-3"), body.apply("ip-sticky-remember-0-7"));
        assertEquals(List.of("ct original ip daddr . meta l4proto . ct original proto-dst . ip daddr . th dport @ip-sticky-id-bit-0"
                        + " ct original ip daddr . meta l4proto . ct original proto-dst @sticky-ips-600"
                        + " update @ip-affinity { ip saddr . ct original ip daddr . meta l4proto . ct original proto-dst . 0x00000003 timeout 600s }",
                "ct original ip daddr . meta l4proto . ct original proto-dst . ip daddr . th dport != @ip-sticky-id-bit-0"
                        + " ct original ip daddr . meta l4proto . ct original proto-dst @sticky-ips-600"
                        + " update @ip-affinity { ip saddr . ct original ip daddr . meta l4proto . ct original proto-dst . 0x00000002 timeout 600s }"),
                body.apply("ip-sticky-remember-2-3"));
        for (String hook : List.of("filter-forward", "filter-input", "filter-output-post-dnat")) {
            assertTrue(body.apply(hook).contains("ct state new jump sticky-remember"), hook);
            assertFalse(none.chains().get(hook).rules().stream().map(x -> NftPrinter.ruleBody(x, none.sets()::get))
                    .anyMatch(x -> x.contains("sticky")), hook + " without sticky ports");
        }
        assertEquals(List.of("dnat ip to meta l4proto . th dport . 0x00000000 map @nodeport-sticky-endpoints-1-8",
                "delete @nodeport-affinity { ip saddr . meta l4proto . th dport . 0x00000000 }"), body.apply("nodeport-sticky-1-8-slot-0"));
    }

    @Test
    void anEndpointKeepsItsAffinityNumberWhileItStays() {
        NftRenderer r = new NftRenderer(CFG);
        ServicePort sticky = svc("sticky", "10.96.0.14", 0, false, 600);
        List<Endpoint> four = eps(4, "node-b");
        Fragment first = r.service(IpFamily.V4, sticky, four, NODE);
        // The second goes: the last takes its index, but every endpoint keeps its number.
        List<Endpoint> three = List.of(four.get(0), four.get(2), four.get(3));
        Fragment second = r.service(IpFamily.V4, sticky, three, NODE, first);
        assertEquals(four.get(3), second.slots().cluster().get(1), "the last endpoint took the index that went");
        assertEquals(Map.of(0, four.get(0), 2, four.get(2), 3, four.get(3)), second.slots().clusterIds().held());
        // One comes: a number never given, not the one that went (clients may still remember it).
        List<Endpoint> back = new ArrayList<>(three);
        back.add(Endpoint.ready(Inet.parse("10.244.7.7"), 8080, "node-b"));
        Fragment third = r.service(IpFamily.V4, sticky, back, NODE, second);
        assertEquals(back.get(3), third.slots().clusterIds().held().get(4));
        // A count that fills its range (8) still gives a new endpoint a number never given: the
        // one freed (1) is kept for later, so its clients pick again rather than follow it.
        AffinityIds ids = third.slots().clusterIds();
        List<Endpoint> more = new ArrayList<>(back);
        for (int i = 0; i < 4; i++) {
            more.add(Endpoint.ready(Inet.parse("10.244.8." + (1 + i)), 8080, "node-b"));
        }
        AffinityIds full = ids.next(more);
        assertEquals(8, full.held().size());
        assertFalse(full.held().containsKey(1), "the freed number is not given while unused ones are");
        assertEquals(more.get(7), full.held().get(8));
        assertEquals(16, full.range());
        // With every number of the range taken or freed, the one freed longest ago is given.
        List<Endpoint> fifteen = new ArrayList<>(more);
        for (int i = 0; i < 7; i++) {
            fifteen.add(Endpoint.ready(Inet.parse("10.244.9." + (1 + i)), 8080, "node-b"));
        }
        AffinityIds fuller = full.next(fifteen);
        assertEquals(16, fuller.byId().size(), "every number below 16 given: 15 held, 1 freed");
        // One replaced: the number freed longest ago (1, not 0 that went now) goes to the newcomer.
        List<Endpoint> replaced = new ArrayList<>(fifteen.subList(1, 15));
        replaced.add(Endpoint.ready(Inet.parse("10.244.9.9"), 8080, "node-b"));
        AffinityIds again = fuller.next(replaced);
        assertEquals(replaced.get(14), again.held().get(1), "the freed number, once none is left unused");
        assertFalse(again.held().containsKey(0));
        assertEquals(AffinityIds.NONE, r.service(IpFamily.V4, svc("plain", "10.96.0.15", 0, false, 0), four, NODE)
                .slots().clusterIds(), "a port without affinity numbers nothing");
    }

    @Test
    void aStickyServiceWithChainsOfItsOwnRemembersTheEndpointInOneSet() {
        NftRenderer r = new NftRenderer(CFG);
        int k = NftRenderer.MAX_PLAIN_PICK + 1; // more than the shared chains pick among: chains of its own
        ServicePort sticky = ServicePort.builder(new ServicePortName("default", "sticky", "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.14"))).nodePort(30014).affinitySeconds(600).build();
        Fragment f = r.service(IpFamily.V4, sticky, manyEps(k), NODE);
        assertTrue(f.sets().isEmpty(), "no set per endpoint: the kernel looks named sets up in a list");
        Fragment globals = r.globals(IpFamily.V4, new ProxyState(Map.of(), Map.of(), NODE));
        assertTrue(globals.sets().containsKey(TableNames.AFFINITY));
        assertTrue(globals.unmanagedSets().contains(TableNames.AFFINITY), "the kernel fills it, we never touch its elements");
        List<String> rules = f.chains().get("svc-default/sticky/tcp/80").rules().stream()
                .map(x -> NftPrinter.ruleBody(x, n -> globals.sets().get(n))).toList();
        assertEquals(3 * k, rules.size(), "a check per endpoint, the random pick, the pick without remembering: " + rules.size());
        assertTrue(rules.get(0).contains("@affinity") && rules.get(0).contains("10.96.0.14")
                && rules.get(0).contains("10.244.1.2") && rules.get(0).contains("timeout 600s")
                && rules.get(0).endsWith("dnat to 10.244.1.2:8080"), rules.get(0));
        assertTrue(rules.get(k).startsWith("numgen random mod " + k + " 0 ") && rules.get(k).contains("update @affinity")
                && rules.get(k).endsWith("dnat to 10.244.1.2:8080"), rules.get(k));
        assertTrue(rules.get(2 * k).startsWith("numgen random mod " + k + " 0 ") && !rules.get(2 * k).contains("@affinity")
                && rules.get(2 * k).endsWith("dnat to 10.244.1.2:8080"), rules.get(2 * k));
        String last = rules.get(3 * k - 1);
        assertTrue(!last.contains("numgen") && !last.contains("@affinity")
                && last.endsWith("dnat to 10.244." + (1 + (k - 1) / 250) + "." + (2 + (k - 1) % 250) + ":8080"),
                "the last pick without remembering takes whoever is left: " + last);
    }

    @Test
    void ipv6AddressesMakeValidNames() {
        NftRenderer r = new NftRenderer(CFG);
        ServicePort s6 = ServicePort.builder(new ServicePortName("default", "six", "", Protocol.UDP), 53)
                .clusterIPs(List.of(Inet.parse("fd00:96::1"))).nodePort(30053).affinitySeconds(30).build();
        List<Endpoint> eps = new ArrayList<>();
        for (int i = 0; i <= NftRenderer.MAX_PLAIN_PICK; i++) { // chains of its own, named by the service
            eps.add(Endpoint.ready(Inet.parse("fd00:244::" + Integer.toHexString(5 + i)), 5353, "node-b"));
        }
        Fragment f = r.service(IpFamily.V6, s6, eps, NODE);
        assertEquals(3 * eps.size(), f.chains().get("svc-default/six/udp/53").rules().size(),
                "affinity checks, the picks, the picks without remembering");
        assertTrue(r.service(IpFamily.V4, s6, List.of(), NODE).chains().isEmpty(), "an IPv6 service has nothing in ip");
    }
}
