package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.RuleParts.concat;
import static io.nftproxy.proxy.render.RuleParts.verdict;
import static io.nftproxy.proxy.render.TableNames.NODEPORT_CHAINS;
import static io.nftproxy.proxy.render.TableNames.SERVICE_CHAINS;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.proxy.model.LbAlgorithm;
import io.nftproxy.proxy.plan.MaglevTable;
import io.nftproxy.proxy.plan.ServicePlan;

/**
 * The hashed pick (service.nftproxy.io/lb-algorithm: maglev or source-hash), shared by every
 * frontend of a kind (IP port or NodePort) whose table has the same size M: a map from "frontend
 * . slot" to endpoint ({@code ip-maglev-slots-M}), one element per slot of the port's Maglev
 * table (plan.MaglevTable), and a chain ({@code ip-maglev-M}) that hashes the client with a fixed
 * seed into a slot and DNATs to the slot's endpoint. {@code services}' verdict map sends such a
 * frontend to its chain. Changing the port's endpoints rewrites the slots that change (a few
 * percent besides the endpoint's own) and nothing else: elements only, as long as the count stays
 * in its bucket (M is sized for 8, 16, 32 … endpoints); a count that leaves it moves the frontend
 * to the next size's map and chain, a verdict element. Both declared while some frontend uses
 * them (on demand: {@link #isSlotsMap}).
 *
 * <p>With ClientIP affinity in use on the kind's tree, the chain first sends a sticky port to the
 * check of its clients ({@link StickyPick}), as the tree's root does: a remembered client goes
 * back to its endpoint, the others are hashed, and the filter chains remember where they went.
 */
public final class MaglevPick {
    /**
     * The seed of every hashed pick, on every node and in every version: changing it would move
     * every client of every hashed service at once.
     */
    static final int SEED = 0x6e667470; // "nftp"

    private MaglevPick() {
    }

    /** The map of a kind's frontends hashed by {@code a} into tables of {@code size} slots. */
    static String slots(PickTree.Kind kind, LbAlgorithm a, int size) {
        return ObjectName.format(ObjectName.Scheme.HASHED_SLOTS, kind, a, null, size);
    }

    /** The chain that hashes into {@link #slots}. */
    static String chain(PickTree.Kind kind, LbAlgorithm a, int size) {
        return ObjectName.format(ObjectName.Scheme.HASHED_CHAIN, kind, a, null, size);
    }

    /** A slots map's name, parsed; null for another set. */
    record SlotsMap(PickTree.Kind kind, LbAlgorithm algorithm, int size) {
        String name() {
            return slots(kind, algorithm, size);
        }

        String chain() {
            return MaglevPick.chain(kind, algorithm, size);
        }
    }

    /** {@code set} as one of the slots maps, or null. Asked of every set of every fragment: a word it must hold first. */
    static SlotsMap parse(String set) {
        if (!set.contains("-slots-")) {
            return null;
        }
        ObjectName n = ObjectName.parse(set);
        return n == null || n.scheme() != ObjectName.Scheme.HASHED_SLOTS ? null : new SlotsMap(n.tree(), n.algorithm(), n.n());
    }

    /**
     * What a hashing chain's name says, for those who read the kernel back ({@code nftproxy dump}):
     * the algorithm's annotation value, the table's size and its slots map; null for another chain.
     */
    public record HashedChain(String algorithm, int size, String slotsMap) {
    }

    /** {@code chain} as one of the hashing chains, or null. */
    public static HashedChain ofChain(String chain) {
        ObjectName n = ObjectName.parse(chain);
        return n == null || n.scheme() != ObjectName.Scheme.HASHED_CHAIN ? null
                : new HashedChain(n.algorithm().value(), n.n(), slots(n.tree(), n.algorithm(), n.n()));
    }

    /**
     * Every slots map a frontend may fill: per kind, algorithm and table size (one size per power
     * of two of endpoints up to ServicePlan.MAX_HASHED_ENDPOINTS). What the endpoint counters read.
     */
    static List<String> allSlotsMaps() {
        List<String> out = new ArrayList<>();
        for (PickTree.Kind kind : List.of(PickTree.Kind.IP, PickTree.Kind.NODEPORT)) {
            for (LbAlgorithm a : List.of(LbAlgorithm.MAGLEV, LbAlgorithm.SOURCE_HASH)) {
                for (int count = 8; count <= ServicePlan.MAX_HASHED_ENDPOINTS; count *= 2) {
                    out.add(slots(kind, a, MaglevTable.sizeFor(count)));
                }
            }
        }
        return out;
    }

    /** Whether {@code set} is one of the slots maps, which the globals declare while some frontend fills them. */
    static boolean isSlotsMap(String set) {
        return parse(set) != null;
    }

    /**
     * Declares, for each slots map in {@code demanded}, the map and its chain; {@code sticky}:
     * the kinds whose sticky chains exist, whose chains check remembered clients first.
     */
    static void declare(FragmentBuilder b, Set<String> demanded, Set<PickTree.Kind> sticky) {
        for (String set : demanded) {
            SlotsMap m = parse(set);
            if (m == null) {
                continue;
            }
            DataType a = b.addr();
            List<DataType> key = m.kind().ip ? List.of(a, DataType.INET_PROTO, DataType.INET_SERVICE, DataType.MARK)
                    : List.of(DataType.INET_PROTO, DataType.INET_SERVICE, DataType.MARK);
            b.set(new NftSet(b.nf, b.t, m.name(), key, DataType.concat(List.of(a, DataType.INET_SERVICE)), 0, 0,
                    (m.kind().ip ? "IP port" : "NodePort") + " . slot to endpoint address . port, " + m.algorithm().value()
                            + " tables of " + m.size() + " slots"));
            List<Rule> rules = new ArrayList<>();
            if (sticky.contains(m.kind())) {
                rules.add(b.rule(m.chain(), concat(concat(key(b, m.kind()), RuleParts.lookup(StickyPick.allMembers(m.kind()))),
                        verdict(Verdict.jump(StickyPick.check(m.kind()))))));
            }
            rules.add(b.rule(m.chain(), b.p.hashedEndpoint(key(b, m.kind()), m.algorithm() == LbAlgorithm.MAGLEV, m.name(),
                    m.size(), SEED)));
            b.chain(Chain.regular(b.nf, b.t, m.chain()), rules);
        }
    }

    /** The frontend's key as the packet carries it: "address . protocol . port", or a NodePort's "protocol . port". */
    private static List<Expr> key(FragmentBuilder b, PickTree.Kind kind) {
        return kind.ip ? b.p.daddrProtoPort() : RuleParts.protoPort(0);
    }

    /**
     * A frontend hashed into {@code table}: sent by {@code services}' verdict map to the chain of
     * its kind, algorithm and size, and one element per slot of the table in that size's map.
     */
    static void frontend(FragmentBuilder b, PickTree.Kind kind, Bytes key, LbAlgorithm a, MaglevTable table) {
        String map = slots(kind, a, table.size());
        b.dispatched(kind.ip ? SERVICE_CHAINS : NODEPORT_CHAINS, SetElement.of(key, Verdict.goTo(chain(kind, a, table.size()))));
        List<Bytes> endpoints = new ArrayList<>(table.endpoints().size());
        table.endpoints().forEach(e -> endpoints.add(MapKeys.endpoint(e.ip(), e.port())));
        int[] slots = table.slots();
        for (int i = 0; i < slots.length; i++) {
            b.element(map, SetElement.of(Bytes.concat(key, Bytes.host32(i)), Data.value(endpoints.get(slots[i]))));
        }
    }
}
