package io.nftproxy.proxy.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.netlink.nft.expr.Lookup;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.DesiredChain;
import io.nftproxy.proxy.render.Fragment;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;
import io.nftproxy.proxy.trace.TraceFilter;
import io.nftproxy.proxy.trace.TraceSession;
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * Headroom in the kernel's jump stack. When it validates a table the kernel walks every chain
 * reachable from each base chain, one level deeper for each jump or goto (a rule's verdict, or a
 * verdict map's elements), and refuses the transaction when a chain sits 16 levels down
 * (NFT_JUMP_STACK_SIZE; nft_chain_validate returns EMLINK). Here the deepest path our ruleset has,
 * counted as the kernel counts it, over the service shapes that make paths long, must leave at
 * least {@value #MARGIN} levels free; and the count is checked against the kernel: with the
 * deepest ruleset in a namespace, a base chain that reaches the deepest path through exactly the
 * free levels commits, one more is refused.
 */
class JumpDepthKernelTest {
    /** NFT_JUMP_STACK_SIZE (include/net/netfilter/nf_tables.h): the chains a path may hold. */
    static final int KERNEL_STACK = 16;
    static final int MARGIN = 4;
    static final String TABLE = "nftproxy";
    static final ProxyConfig CFG = ProxyConfig.builder("node-a")
            .nodeIPs(List.of(Inet.parse("192.168.50.2"), Inet.parse("fd00:50::2")))
            .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"), Cidr.parse("fd00:244::/64")))
            .serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16"), Cidr.parse("fd00:96::/112"))).build();

    /**
     * One service port of the shape: dual-stack or not, a load-balancer IP with source ranges or
     * none, external traffic policy Local or Cluster, ClientIP affinity or none, and its
     * endpoint count (every third on this node).
     */
    static ProxyState state(boolean dual, boolean ranges, boolean local, boolean sticky, int endpoints) {
        ServicePortName id = new ServicePortName("deep", "svc", "http", Protocol.TCP);
        List<InetAddress> clusterIPs = dual ? List.of(Inet.parse("10.96.0.10"), Inet.parse("fd00:96::10"))
                : List.of(Inet.parse("10.96.0.10"));
        ServicePort.Builder b = ServicePort.builder(id, 80).clusterIPs(clusterIPs).nodePort(30010)
                .externalIPs(List.of(Inet.parse("198.51.100.10"))).externalPolicyLocal(local)
                .affinitySeconds(sticky ? 600 : 0);
        if (ranges) {
            b.loadBalancerIPs(dual ? List.of(Inet.parse("203.0.113.10"), Inet.parse("2001:db8::10")) : List.of(Inet.parse("203.0.113.10")))
                    .loadBalancerSourceRanges(List.of(Cidr.parse("192.0.2.0/24"), Cidr.parse("2001:db8:1::/48")));
        }
        List<Endpoint> eps = new ArrayList<>();
        for (int i = 0; i < endpoints; i++) {
            String node = i % 3 == 0 ? "node-a" : "node-b";
            eps.add(Endpoint.ready(Inet.parse("10.244." + (i / 250) + "." + (i % 250 + 2)), 8080, node));
            if (dual) {
                eps.add(Endpoint.ready(Inet.parse("fd00:244::" + Integer.toHexString(i + 2)), 8080, node));
            }
        }
        NodeInfo node = new NodeInfo("node-a", null, List.of(Inet.parse("192.168.50.2"), Inet.parse("fd00:50::2")), false);
        return new ProxyState(Map.of(id, b.build()), Map.of(id, eps), node);
    }

    /** A family's fragments as the daemon renders them: the globals, then the service ports'. */
    static List<Fragment> fragments(NftRenderer r, IpFamily f, ProxyState state) {
        List<Fragment> out = new ArrayList<>();
        out.add(r.globals(f, state));
        state.services().values().forEach(svc -> out.add(r.service(f, svc, state.endpointsOf(svc.id()), state.node())));
        return out;
    }

    /**
     * A family's chains as the kernel's validation walks them: a rule's jump or goto, and a lookup
     * in a verdict map (every chain its elements name), lead one level down.
     */
    static final class ChainGraph {
        private final Map<String, DesiredChain> chains = new HashMap<>();
        private final Map<String, NftSet> sets = new HashMap<>();
        private final Map<String, List<SetElement>> elements = new HashMap<>();
        private final Map<String, Integer> memo = new HashMap<>();

        ChainGraph(List<Fragment> frags) {
            for (Fragment f : frags) {
                chains.putAll(f.chains());
                sets.putAll(f.sets());
                f.elements().forEach((set, els) -> elements.computeIfAbsent(set, k -> new ArrayList<>()).addAll(els));
            }
        }

        /** The most chains on one path from each base chain, by name. */
        Map<String, Integer> depths() {
            Map<String, Integer> out = new TreeMap<>();
            chains.forEach((name, c) -> {
                if (c.chain().isBase()) {
                    out.put(name, depth(name));
                }
            });
            return out;
        }

        /** The chains on the deepest path from {@code chain}, for messages. */
        List<String> path(String chain) {
            List<String> out = new ArrayList<>();
            for (String at = chain; at != null; ) {
                out.add(at);
                String next = null;
                for (String t : targets(at)) {
                    if (next == null || depth(t) > depth(next)) {
                        next = t;
                    }
                }
                at = next;
            }
            return out;
        }

        private int depth(String chain) {
            Integer known = memo.get(chain);
            if (known == null) {
                int below = 0;
                for (String next : targets(chain)) {
                    below = Math.max(below, depth(next));
                }
                known = below + 1;
                memo.put(chain, known);
            }
            return known;
        }

        private Set<String> targets(String chain) {
            Set<String> out = new java.util.TreeSet<>();
            for (Rule r : chains.get(chain).rules()) {
                for (Expr x : r.exprs()) {
                    if (x instanceof Immediate i && i.data() instanceof Verdict v && v.chain() != null) {
                        out.add(v.chain());
                    } else if (x instanceof Lookup l && sets.containsKey(l.set()) && sets.get(l.set()).isVerdictMap()) {
                        for (SetElement e : elements.getOrDefault(l.set(), List.of())) {
                            if (e.data() instanceof Verdict v && v.chain() != null) {
                                out.add(v.chain());
                            }
                        }
                    }
                }
            }
            return out;
        }
    }

    static Map<String, Integer> depths(List<Fragment> frags) {
        return new ChainGraph(frags).depths();
    }

    /** The deepest path of both families' rulesets of {@code state}, and the base chain it starts from. */
    static Map.Entry<String, Integer> deepest(ProxyState state) {
        NftRenderer r = new NftRenderer(CFG);
        Map.Entry<String, Integer> deepest = Map.entry("", 0);
        for (IpFamily f : IpFamily.values()) {
            ChainGraph graph = new ChainGraph(fragments(r, f, state));
            for (Map.Entry<String, Integer> e : graph.depths().entrySet()) {
                if (e.getValue() > deepest.getValue()) {
                    deepest = Map.entry(f.nft().keyword() + " " + String.join(" -> ", graph.path(e.getKey())), e.getValue());
                }
            }
        }
        return deepest;
    }

    @ParameterizedTest(name = "dual-stack {0}, source ranges {1}, eTP Local {2}, affinity {3}, {4} endpoints")
    @CsvSource({
            "false, false, false, false, 3",
            "false, false, false, true, 3",
            "true, true, true, true, 3",
            "true, true, true, true, 100",
            "true, true, true, true, 200",
            "true, true, true, false, 1000",
            "true, true, true, true, 1000",
            "true, true, true, true, 1100",
            "true, true, false, true, 1100",
            "false, false, false, true, 1100",
            "true, true, false, false, 1100",
            "false, false, false, false, 5000",
    })
    void theDeepestPathLeavesHeadroom(boolean dual, boolean ranges, boolean local, boolean sticky, int endpoints) {
        Map.Entry<String, Integer> d = deepest(state(dual, ranges, local, sticky, endpoints));
        assertTrue(d.getValue() + MARGIN <= KERNEL_STACK, "from " + d.getKey() + ": " + d.getValue()
                + " chains deep, the kernel allows " + KERNEL_STACK);
    }

    /**
     * The deepest shape's ruleset in a namespace, as the daemon syncs it, and tracing on; then
     * per family, a base chain of the deepest path's hook that reaches a copy of its base chain's
     * rules through padding chains: the kernel takes exactly as many as the free levels counted
     * above, and refuses one more (EMLINK).
     */
    @Test
    void theKernelCountsAsWeDo() throws Exception {
        Kernel.require();
        ProxyState state = state(true, true, true, true, 1100);
        NftRenderer renderer = new NftRenderer(CFG);
        try (TestNetns ns = TestNetns.create("nftp-depth"); NftClient nft = NftClient.open(ns.ns())) {
            SyncResult r = new Syncer(nft, renderer, TABLE).sync(state, null);
            assertTrue(r.rejectedServices().isEmpty(), r.rejectedServices().toString());
            try (TraceSession trace = TraceSession.open(nft, TABLE, new TraceFilter(null, List.of(), null))) {
                for (IpFamily f : IpFamily.values()) {
                    Map<String, Integer> depths = depths(fragments(renderer, f, state));
                    String base = depths.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
                    int free = KERNEL_STACK - depths.get(base);
                    assertTrue(free >= MARGIN, f + ": " + base + " is " + depths.get(base) + " chains deep");
                    Chain baseChain = nft.listChains(f.nft(), TABLE).stream().filter(c -> c.name().equals(base)).findFirst().orElseThrow();
                    List<Rule> rules = nft.listRules(f.nft(), TABLE, base);
                    nft.commit(padded(f.nft(), baseChain, rules, free, "ok"));
                    NftException refused = assertThrows(NftException.class,
                            () -> nft.commit(padded(f.nft(), baseChain, rules, free + 1, "over")));
                    assertEquals(31, refused.errno(), f + ": EMLINK, too many links: " + refused.getMessage());
                }
            }
        }
    }

    /**
     * A base chain of {@code like}'s type and hook whose path reaches {@code rules} (the base
     * chain's, in a regular chain) after {@code pads} chains: {@code pads} levels more than the
     * base chain's own path.
     */
    static Transaction padded(Family f, Chain like, List<Rule> rules, int pads, String tag) {
        Transaction tx = new Transaction();
        String entry = "depth-" + tag;
        tx.add(Chain.base(f, TABLE, entry, like.base().type(), like.base().hook(), like.base().priority() + 1));
        String previous = entry;
        for (int i = 1; i < pads; i++) {
            String pad = "depth-" + tag + "-" + i;
            tx.add(Chain.regular(f, TABLE, pad));
            tx.add(Rule.of(f, TABLE, previous, List.of(Immediate.verdict(Verdict.jump(pad)))));
            previous = pad;
        }
        String copy = "depth-" + tag + "-copy";
        tx.add(Chain.regular(f, TABLE, copy));
        tx.add(Rule.of(f, TABLE, previous, List.of(Immediate.verdict(Verdict.jump(copy)))));
        for (Rule r : rules) {
            tx.add(Rule.of(f, TABLE, copy, r.exprs()));
        }
        return tx;
    }
}
