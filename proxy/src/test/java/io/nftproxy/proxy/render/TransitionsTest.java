package io.nftproxy.proxy.render;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.proxy.render.TableNames;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * What a change of a port's endpoint count leaves in place for packets that cross its commit
 * ({@link Transitions}), against the tree the old generation's globals render: a packet walks
 * that tree, each set it reads before the commit's flip answering for the old count and each one
 * after for the new, wherever the flip falls; every index it can then look up is held by the new
 * generation or the transitional elements, and maps to an endpoint of the old or the new set.
 */
class TransitionsTest {
    static final ServicePort PORT = NftRendererTest.svc("churn", "10.96.0.10", 0, false, 0);
    static final ServicePort OTHER = NftRendererTest.svc("other", "10.96.0.11", 0, false, 0);
    static final Bytes FRONT = MapKeys.frontend(Inet.parse("10.96.0.10"), 6, 80);

    @ParameterizedTest(name = "{0} -> {1} endpoints, another port with {2}: reaches {3}")
    @CsvSource(delimiter = ';', value = {
        // Bit 2 read before the flip, bits 1 and 0 after: 100 | 011 -> 111, 8 endpoints.
        "5; 4; 0; 4 5 6 8",
        "4; 5; 0; 1 3 4 5",
        // Into another bucket: the old generation's tree has no 9-16 (nor bit 3 to test), so
        // every packet reaches 1-8's map, which the port leaves (its 9 endpoints are in 9-16's).
        "8; 9; 0; 1 5 7 8",
        "9; 8; 0; 9 10 12 16",
        "16; 17; 0; 9 13 15 16",
        // Bit 3 read before the flip leads to 9-16's map, which the port leaves.
        "12; 5; 8; 5 9 11 12 13",
        // The old tree goes from bit 5 straight to 1-8 (bits 4 and 3 untested): the new count,
        // 20, read through it after the flip, reaches 4.
        "40; 20; 3; 4 36 40 52",
        "1; 2; 0; 1 2",
        // The same count (endpoints replaced in place): only that count, nothing kept.
        "5; 5; 0; 5",
        // The port goes, or is left without endpoints: the new bits are all clear, and nothing
        // is kept (a packet that misses is answered as after the commit: without endpoints).
        "5; 0; 0; 1 5",
        "12; 0; 0; 9 11 12",
        // Blocks above 128: the block's set is read first; missed after the flip, the packet
        // goes on to the smallest bucket, which a tree of blocks alone declares for it.
        "130; 120; 0; 8 130 132 136 152 184 248",
        "120; 130; 0; 66 98 114 118 120",
        "3; 200; 0; 3 4 8",
        "200; 3; 0; 3 131 195 199 200",
        // Past 1,024, services' verdict map sends the port to its block's tree, before the root
        // and its blocks: within a block only bits change; across blocks the verdict read before
        // the flip leads to the old block's tree with the new bits, the one read after it to the
        // new block's, which came first (the new count); back under 1,024, a packet that misses
        // the verdict map after the flip meets the root's smallest bucket, as from a block.
        "1100; 1110; 0; 1094 1098 1100 1102 1110",
        "1110; 1100; 0; 1100 1108 1110 1112 1116",
        "1100; 1300; 0; 1044 1092 1100 1108 1300",
        "1300; 1100; 0; 1100 1292 1300 1308 1356",
        "1000; 1100; 0; 4 972 996 1000 1004 1100",
        "1100; 1000; 0; 8 1096 1100 1104 1128",
        "1100; 0; 0; 1 1025 1089 1097 1099 1100",
    })
    void everyIndexAPacketCanReachIsHeld(int a, int b, int other, String reaches) {
        NftRenderer r = new NftRenderer(NftRendererTest.CFG);
        NodeInfo node = NftRendererTest.NODE;
        Fragment old = r.service(IpFamily.V4, PORT, NftRendererTest.manyEps(a), node);
        Fragment neu = b == 0 ? null : r.service(IpFamily.V4, PORT, NftRendererTest.manyEps(b), node, old);
        Fragment beside = other == 0 ? Fragment.EMPTY : r.service(IpFamily.V4, OTHER, NftRendererTest.manyEps(other), node);
        Set<String> declared = new TreeSet<>(old.demands());
        declared.addAll(beside.demands());
        Fragment globals = r.globals(IpFamily.V4, oldState(a, other), new TreeSet<>(), declared);
        Fragment kept = Transitions.between(old, neu, declared);

        Set<Integer> reached = new TreeSet<>();
        Set<Bytes> endpoints = new HashSet<>();
        for (Fragment f : neu == null ? List.of(old) : List.of(old, neu)) {
            f.elements().getOrDefault(PickTree.Kind.IP.endpoints(a), List.of()).forEach(e -> endpoints.add(value(e)));
            if (b > 0) {
                f.elements().getOrDefault(PickTree.Kind.IP.endpoints(b), List.of()).forEach(e -> endpoints.add(value(e)));
            }
        }
        for (int flip = 0; flip <= 20; flip++) {
            int c = walk(globals, a - 1, b == 0 ? -1 : b - 1, flip);
            assertEquals(c, PickTree.reached(PickTree.Kind.IP, declared, a - 1, b == 0 ? 0 : b - 1, flip),
                    "the tree as declared, flip after " + flip + " reads");
            reached.add(c);
            String map = PickTree.Kind.IP.endpoints(c);
            for (int i = 0; i < (b == 0 ? 0 : c); i++) {
                Bytes key = Bytes.concat(FRONT, Bytes.host32(i));
                SetElement found = element(neu, map, key);
                if (found == null) {
                    found = element(kept, map, key);
                }
                assertTrue(found != null, "index " + i + " of " + c + " in " + map + " (flip after " + flip + " reads)");
                assertTrue(endpoints.contains(value(found)), "an endpoint of the old or the new set: " + found);
            }
        }
        assertEquals(reaches, String.join(" ", reached.stream().map(String::valueOf).toList()));
        assertEquals(reached, Transitions.reachable(PickTree.Kind.IP, declared, a, b));
        // Never in the way of the new generation: no key the new fragment holds in the same map.
        kept.elements().forEach((set, els) -> els.forEach(e -> assertFalse(element(neu, set, e.key()) != null,
                "kept and new both hold " + e + " in " + set)));
        if (a == b || b == 0) {
            assertEquals(Fragment.EMPTY, kept);
        }
    }

    /**
     * Which frontends left without a tree keep nothing: a ClusterIP port that goes, whose packets
     * an un-NATed crossing meets the new generation's checks with; not an external IP (the node's
     * own connections to it are checked before the DNAT only), nor a port that moves to chains of
     * its own past 1,024 endpoints (a sticky one: still DNATed after the commit, by them).
     */
    @org.junit.jupiter.api.Test
    void aFrontendLeftWithoutATreeKeepsNothingOnlyWhereTheNewGenerationAnswers() {
        NftRenderer r = new NftRenderer(NftRendererTest.CFG);
        NodeInfo node = NftRendererTest.NODE;
        Set<String> declared = new TreeSet<>();
        Fragment clusterIp = r.service(IpFamily.V4, PORT, NftRendererTest.manyEps(5), node);
        declared.addAll(clusterIp.demands());
        assertEquals(Fragment.EMPTY, Transitions.between(clusterIp, null, declared), "a ClusterIP port removed");

        ServicePort external = ServicePort.builder(PORT.id(), 80).clusterIPs(List.of(Inet.parse("10.96.0.10")))
                .externalIPs(List.of(Inet.parse("203.0.113.10"))).build();
        Fragment withExternal = r.service(IpFamily.V4, external, NftRendererTest.manyEps(5), node);
        Fragment kept = Transitions.between(withExternal, null, declared);
        Bytes ext = MapKeys.frontend(Inet.parse("203.0.113.10"), 6, 80);
        assertEquals(5, kept.elements().get(PickTree.Kind.IP.endpoints(5)).stream()
                .filter(e -> e.key().slice(0, ext.length()).equals(ext)).count(), "the external IP's five indices kept: " + kept);
        assertTrue(kept.elements().get(PickTree.Kind.IP.endpoints(5)).stream().noneMatch(e -> e.key().slice(0, FRONT.length()).equals(FRONT)),
                "the ClusterIP's none");

        ServicePort sticky = NftRendererTest.svc("churn", "10.96.0.10", 0, false, 600);
        Fragment big = r.service(IpFamily.V4, sticky, NftRendererTest.manyEps(1000), node);
        Set<String> bigDeclared = new TreeSet<>(big.demands());
        Fragment own = r.service(IpFamily.V4, sticky, NftRendererTest.manyEps(1100), node, big);
        assertFalse(own.chains().isEmpty(), "sticky past 1,024: chains of its own");
        Fragment moved = Transitions.between(big, own, bigDeclared);
        assertEquals(1000, moved.elements().get(PickTree.Kind.IP.endpoints(1000)).size(),
                "every old index kept for packets still in the tree");
    }

    /**
     * A port past 1,024 endpoints whose external traffic's policy flips: its external frontend has
     * its way to the block in both verdict maps under either policy, so the flip changes no
     * verdict and keeps none (a packet reading local-ips before the commit's flip and a verdict map
     * after it finds its block either way).
     */
    @org.junit.jupiter.api.Test
    void aPolicyFlipPastTheRootsBlocksKeepsBothWaysToTheBlock() {
        NftRenderer r = new NftRenderer(NftRendererTest.CFG);
        NodeInfo node = NftRendererTest.NODE;
        List<Endpoint> eps = new java.util.ArrayList<>(NftRendererTest.manyEps(1100));
        eps.set(0, Endpoint.ready(eps.get(0).address(), 8080, "node-a"));
        ServicePort.Builder port = ServicePort.builder(PORT.id(), 80).clusterIPs(List.of(Inet.parse("10.96.0.10")))
                .externalIPs(List.of(Inet.parse("203.0.113.10"))).nodePort(30010);
        Fragment cluster = r.service(IpFamily.V4, port.externalPolicyLocal(false).build(), eps, node);
        Fragment local = r.service(IpFamily.V4, port.externalPolicyLocal(true).build(), eps, node, cluster);
        Bytes ext = MapKeys.frontend(Inet.parse("203.0.113.10"), 6, 80);
        for (Fragment f : List.of(cluster, local)) {
            for (String map : List.of(TableNames.SERVICE_CHAINS, TableNames.IP_EXTERNAL_LOCAL_BLOCKS)) {
                SetElement e = element(f, map, ext);
                assertTrue(e != null && e.data().equals(io.nftproxy.netlink.nft.Verdict.goTo("ip-pick-1025-1152")),
                        map + " sends the external IP to its block: " + e);
            }
            assertEquals(1, f.elements().get(TableNames.NODEPORT_EXTERNAL_LOCAL_BLOCKS).size());
            assertEquals(2, f.elements().get(TableNames.NODEPORT_CHAINS).size() + f.elements().get(TableNames.SERVICE_CHAINS).size()
                    - 1, "the ClusterIP in services' only, the external IP and the NodePort in both");
        }
        assertTrue(element(cluster, TableNames.LOCAL_IPS, ext) == null && element(local, TableNames.LOCAL_IPS, ext) != null,
                "local-ips decides the policy");
        Set<String> declared = new TreeSet<>(cluster.demands());
        for (Fragment kept : List.of(Transitions.between(cluster, local, declared), Transitions.between(local, cluster, declared))) {
            assertFalse(kept.elements().containsKey(TableNames.SERVICE_CHAINS) || kept.elements().containsKey(TableNames.IP_EXTERNAL_LOCAL_BLOCKS),
                    "no verdict kept: " + kept.elements().keySet());
        }
    }

    /** The old generation's state: the port with {@code a} endpoints and the other port with {@code other}. */
    static ProxyState oldState(int a, int other) {
        Map<ServicePortName, ServicePort> ports = new HashMap<>();
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>();
        ports.put(PORT.id(), PORT);
        eps.put(PORT.id(), NftRendererTest.manyEps(a));
        if (other > 0) {
            ports.put(OTHER.id(), OTHER);
            eps.put(OTHER.id(), NftRendererTest.manyEps(other));
        }
        return new ProxyState(ports, eps, NftRendererTest.NODE);
    }

    /**
     * The count whose last level a packet reaches through the rendered tree when its first
     * {@code flip} reads of the count sets answer for k − 1 = {@code before} and the rest for
     * {@code after} (−1: a member of none).
     */
    static int walk(Fragment g, int before, int after, int flip) {
        int reads = 0;
        String chain = PickTree.Kind.IP.root();
        if (Math.max(before, after) >= NftRenderer.MAX_PLAIN_PICK) {
            // services' verdict map, asked before the root: a count past the root's blocks goes
            // to its block's tree, when the old generation has it; else (a tree this change
            // brings, committed before the element that leads to it) every read is after the flip.
            int km1 = reads++ < flip ? before : after;
            if (km1 >= NftRenderer.MAX_PLAIN_PICK) {
                String blockRoot = PickTree.Kind.IP.blockRoot(km1 / NftRenderer.MAX_SHARED_PICK);
                if (!g.chains().containsKey(blockRoot)) {
                    assertTrue(reads > flip, "the old generation's own count has its tree");
                    return after + 1;
                }
                chain = blockRoot;
            }
        }
        Pattern rule = Pattern.compile("(?:@(\\S+) )?goto (\\S+)$");
        while (true) {
            List<String> body = NftRendererTest.body(g, chain);
            if (body.stream().noneMatch(x -> x.contains("goto "))) {
                Matcher m = Pattern.compile("-pick-(\\d+)-(\\d+)$").matcher(chain);
                assertTrue(m.find(), chain);
                int km1 = reads < flip ? before : after;
                return km1 >= 0 && (km1 & 1) != 0 ? Integer.parseInt(m.group(2)) : Integer.parseInt(m.group(1));
            }
            String next = null;
            for (String text : body) {
                Matcher m = rule.matcher(text);
                assertTrue(m.find(), text);
                if (m.group(1) == null || member(m.group(1), reads++ < flip ? before : after)) {
                    next = m.group(2);
                    break;
                }
            }
            chain = next;
        }
    }

    /** Whether a port with k − 1 = {@code km1} (−1: none) is a member of the tree's count set {@code set}. */
    static boolean member(String set, int km1) {
        if (km1 < 0) {
            return false;
        }
        Matcher bit = Pattern.compile("^ip-count-bit-(\\d+)$").matcher(set);
        if (bit.find()) {
            return (km1 % NftRenderer.MAX_SHARED_PICK & 1 << Integer.parseInt(bit.group(1))) != 0;
        }
        Matcher block = Pattern.compile("^ip-count-block-(\\d+)$").matcher(set);
        assertTrue(block.find(), set);
        return km1 / NftRenderer.MAX_SHARED_PICK == Integer.parseInt(block.group(1));
    }

    static SetElement element(Fragment f, String set, Bytes key) {
        if (f == null) {
            return null;
        }
        for (SetElement e : f.elements().getOrDefault(set, List.of())) {
            if (e.key().equals(key)) {
                return e;
            }
        }
        return null;
    }

    static Bytes value(SetElement e) {
        return ((Data.Value) e.data()).bytes();
    }
}
