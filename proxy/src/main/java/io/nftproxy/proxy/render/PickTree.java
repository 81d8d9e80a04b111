package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.NftRenderer.MAX_SHARED_PICK;
import static io.nftproxy.proxy.render.RuleParts.concat;
import static io.nftproxy.proxy.render.RuleParts.verdict;

import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Expr;

/**
 * How a plain service port reaches the shared chain that picks among its k endpoints without a
 * verdict of its own: k − 1 is written in binary as the port's membership in one set per bit,
 * and a binary tree of shared chains reads the bits, highest first, down to the leaf that picks
 * among k ({@code ip-pick-k}, {@code nodeport-pick-k}).
 *
 * <p>Why not a verdict map from the port to {@code goto pick-k}: changing a verdict element makes
 * the kernel validate every chain reachable from the map at commit (18-24 ms a change at 100k
 * services). Adding or removing an endpoint here moves the port in or out of a few bit sets,
 * elements without data, which the kernel commits without validating anything. Why not a data
 * map from the port to k feeding a constant verdict map in the same rule: the kernel runs it,
 * but nft (1.0.6) aborts listing such a rule, and every operator's {@code nft list ruleset}
 * would crash.
 *
 * <p>A new connection to a plain port pays {@code log2(MAX_SHARED_PICK)} more set lookups (7).
 * The tree is built once with the table and never changes. One tree per kind of frontend: IP
 * ports ({@code ip daddr . meta l4proto . th dport}) and NodePorts ({@code meta l4proto . th
 * dport}).
 */
final class PickTree extends RenderPart {
    /** Bits of k − 1 for k up to {@link NftRenderer#MAX_SHARED_PICK}. */
    static final int BITS = Integer.numberOfTrailingZeros(MAX_SHARED_PICK);

    /**
     * The trees: per kind of frontend (IP ports, NodePorts), one over the endpoints Cluster-policy
     * traffic picks among and one over this node's endpoints, which external traffic of an
     * externalTrafficPolicy Local port picks among (its frontend is counted in both).
     */
    enum Kind {
        IP("ip", true, false), NODEPORT("nodeport", false, false),
        IP_LOCAL("ip-local", true, true), NODEPORT_LOCAL("nodeport-local", false, true);

        final String prefix;
        /** Keyed by "address . protocol . port" (IP ports), else by "protocol . port" (NodePorts). */
        final boolean ip;
        /** Over this node's endpoints (external traffic of policy Local). */
        final boolean local;

        Kind(String prefix, boolean ip, boolean local) {
            this.prefix = prefix;
            this.ip = ip;
            this.local = local;
        }

        /** The tree of the same kind of frontend over this node's endpoints. */
        Kind local() {
            return ip ? IP_LOCAL : NODEPORT_LOCAL;
        }

        /** The set of ports whose endpoint count minus one has {@code bit} set. */
        String bitSet(int bit) {
            return prefix + "-count-bit-" + bit;
        }

        /** The chain that still chooses among counts {@code lo}..{@code hi}; the root chooses among all. */
        String chain(int lo, int hi) {
            return prefix + "-pick-" + lo + "-" + hi;
        }

        String root() {
            return chain(1, MAX_SHARED_PICK);
        }

        /** The leaf that picks among k endpoints. */
        String leaf(int k) {
            return prefix + "-pick-" + k;
        }

        /** The map from "frontend . index" to endpoint the leaves of this kind look up. */
        String endpoints() {
            return switch (this) {
                case IP -> NftRenderer.SERVICE_ENDPOINTS;
                case NODEPORT -> NftRenderer.NODEPORT_ENDPOINTS;
                case IP_LOCAL -> NftRenderer.LOCAL_ENDPOINTS;
                case NODEPORT_LOCAL -> NftRenderer.NODEPORT_LOCAL_ENDPOINTS;
            };
        }

        /** What its bit sets count, for their comments. */
        private String counted() {
            return (ip ? "IP ports" : "NodePorts") + (local ? " of policy Local whose local" : " whose");
        }
    }

    static {
        if (Integer.bitCount(MAX_SHARED_PICK) != 1) {
            throw new AssertionError("the tree halves the counts: MAX_SHARED_PICK must be a power of two");
        }
    }

    private final Kind kind;
    /** The affinity timeouts (seconds) with shared chains: a sticky port's leaf sends it to them. */
    private final SortedSet<Long> stickyTimeouts;

    PickTree(FragmentBuilder b, Kind kind, SortedSet<Long> stickyTimeouts) {
        super(b);
        this.kind = kind;
        this.stickyTimeouts = stickyTimeouts;
    }

    /** The bit sets, the tree's chains, and the leaves: {@code KIND-pick-k} for k = 1..MAX_SHARED_PICK. */
    void declare() {
        for (int bit = 0; bit < BITS; bit++) {
            b.set(kindSet(kind.bitSet(bit)).withComment(
                    kind.counted() + " endpoint count minus one has bit " + bit + " set"));
        }
        chains(1, MAX_SHARED_PICK);
        // A leaf picks one of k endpoints: "destination . numgen random mod k" in the endpoint map.
        // A port with ClientIP affinity is a member of its timeout's sticky set and goes on to
        // that timeout's leaf for k, which remembers the index drawn (StickyPick).
        for (int k = 1; k <= MAX_SHARED_PICK; k++) {
            List<Rule> rules = new ArrayList<>();
            for (long timeout : stickyTimeouts) {
                rules.add(b.rule(kind.leaf(k), concat(concat(key(), RuleParts.lookup(StickyPick.members(kind, timeout))),
                        verdict(Verdict.goTo(StickyPick.leaf(kind, timeout, k))))));
            }
            rules.add(b.rule(kind.leaf(k), p.pickEndpoint(key(), kind.endpoints(), k)));
            b.chain(Chain.regular(nf, t, kind.leaf(k)), rules);
        }
    }

    private NftSet kindSet(String name) {
        return kind.ip ? NftSet.set(nf, t, name, b.addr(), DataType.INET_PROTO, DataType.INET_SERVICE)
                : NftSet.set(nf, t, name, DataType.INET_PROTO, DataType.INET_SERVICE);
    }

    /** The chain choosing among counts lo..hi (a power of two of them), and the chains below it. */
    private void chains(int lo, int hi) {
        int half = (hi - lo + 1) / 2;
        int bit = Integer.numberOfTrailingZeros(half);
        String name = kind.chain(lo, hi);
        String upper = half == 1 ? kind.leaf(hi) : kind.chain(lo + half, hi);
        String lower = half == 1 ? kind.leaf(lo) : kind.chain(lo, lo + half - 1);
        b.chain(Chain.regular(nf, t, name), List.of(
                b.rule(name, concat(concat(key(), RuleParts.lookup(kind.bitSet(bit))), verdict(Verdict.goTo(upper)))),
                b.rule(name, List.of(verdict(Verdict.goTo(lower))))));
        if (half > 1) {
            chains(lo + half, hi);
            chains(lo, lo + half - 1);
        }
    }

    private List<Expr> key() {
        return kind.ip ? p.daddrProtoPort() : p.protoPort();
    }

    /** A port with {@code k} endpoints (1..MAX_SHARED_PICK): its key in the bit sets of k − 1. */
    static void count(FragmentBuilder b, Kind kind, Bytes key, int k) {
        if (k < 1 || k > MAX_SHARED_PICK) {
            throw new IllegalArgumentException("no shared pick chain for " + k + " endpoints");
        }
        for (int bit = 0; bit < BITS; bit++) {
            if ((k - 1 & 1 << bit) != 0) {
                b.element(kind.bitSet(bit), SetElement.of(key));
            }
        }
    }
}
