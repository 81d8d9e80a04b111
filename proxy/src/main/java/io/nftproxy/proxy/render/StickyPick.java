package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.NftRenderer.MAX_SHARED_PICK;
import static io.nftproxy.proxy.render.RuleParts.concat;
import static io.nftproxy.proxy.render.RuleParts.reg;
import static io.nftproxy.proxy.render.RuleParts.verdict;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Immediate;

/**
 * ClientIP session affinity for ports that are only data: shared chains per tree ({@link
 * PickTree.Kind}: the cluster trees, and the local trees external traffic of policy Local picks
 * through, each with its own affinity set) and affinity timeout ({@link StickyTimeout}), written
 * once, which remember the <em>index</em> a client drew rather than the endpoint. A client's entry in the kind's affinity set is "client . frontend . index"; the
 * port's endpoints keep their indices from one sync to the next ({@link EndpointSlots}), so the
 * index names the same endpoint for as long as that endpoint stays.
 *
 * <p>For a port of k endpoints, the leaf {@code KIND-sticky-T-pick-k} first jumps to the check
 * chain of the next power of two n ≥ k, one rule per index: "client . frontend . i" in the
 * affinity set jumps to the slot chain of i (slots are per endpoint map, {@link PickTree#bucket}).
 * The slot chain refreshes the entry and DNATs to the endpoint at index i; when there is none (the
 * port has fewer endpoints now) it matches nothing and returns, and the leaf draws {@code numgen random mod k} and goes through the slots map to the
 * slot chain of the index drawn, which remembers it and DNATs. A new index is remembered beside
 * a stale one, and the check finds the lower one first, which is the new one: a stale index is
 * always past the current count.
 *
 * <p>Why not one dynamic map from client to endpoint: the kernel could hold it, but checking that
 * the remembered endpoint is still one of the port's would use a map's result as another lookup's
 * key, which nft (1.0.6) aborts listing. Why the index and not the service port in the key: the
 * shared chains know the packet's frontend, not the service port behind it, and naming the port
 * would need the same map-result key. So a client's affinity is kept per frontend (each ClusterIP,
 * external IP, load-balancer IP, and the NodePort), where kube-proxy keeps one per service port:
 * a client reaching one sticky service through two of its frontends may be sent to two endpoints.
 * And when an endpoint goes, the clients of the endpoint that takes its index lose their
 * affinity once (kube-proxy moves only the removed endpoint's clients).
 *
 * <p>A sticky port past MAX_SHARED_PICK endpoints, in block h of the trees ({@link PickTree}), is
 * a member of {@code sticky-ips-T-block-h} instead of {@code sticky-ips-T}: the set the block's
 * leaves test, and what makes the globals declare that block's sticky chains for T (a check of
 * 128·(h+1) indices, as many slot chains on the block's endpoint map, its slots map, and the
 * leaves for the block's counts), only while some sticky port of T is in the block. They cost a
 * few hundred chains; declared for every timeout and block in use, a cluster with one large
 * plain service and one small sticky one would carry them for nothing.
 */
final class StickyPick extends RenderPart {
    private final PickTree.Kind kind;
    private final long timeoutSeconds;
    /** The blocks above the first with a sticky port of this kind and timeout ({@link #blockMembers}), ascending. */
    private final List<Integer> blocks = new ArrayList<>();

    /**
     * @param demanded the on-demand sets the services fill, of every kind and timeout (the others' are ignored)
     */
    StickyPick(FragmentBuilder b, PickTree.Kind kind, long timeoutSeconds, Set<String> demanded) {
        super(b);
        this.kind = kind;
        this.timeoutSeconds = timeoutSeconds;
        for (int block = 1; block < PickTree.BLOCKS; block++) {
            if (demanded.contains(blockMembers(kind, timeoutSeconds, block))) {
                blocks.add(block);
            }
        }
    }

    /** The set of this kind's frontends with this timeout (ports with affinity that are only data). */
    String members() {
        return members(kind, timeoutSeconds);
    }

    /** {@link #members()} by name alone, for the services' elements and the tree's leaves. */
    static String members(PickTree.Kind kind, long timeoutSeconds) {
        return membersPrefix(kind) + timeoutSeconds;
    }

    /** What the names of this kind's sticky sets start with. */
    static String membersPrefix(PickTree.Kind kind) {
        return "sticky-" + (kind.local ? "local-" : "") + (kind.ip ? "ips" : "nodeports") + "-";
    }

    /**
     * The set of this kind's frontends with this timeout whose endpoint count is in block {@code
     * block} of the tree (128·block + 1 to 128·(block + 1)): declared while some port fills it.
     */
    static String blockMembers(PickTree.Kind kind, long timeoutSeconds, int block) {
        return members(kind, timeoutSeconds) + "-block-" + block;
    }

    /** The set a sticky frontend of k endpoints is a member of: its timeout's, or its block's. */
    static String membersFor(PickTree.Kind kind, long timeoutSeconds, int k) {
        int block = (k - 1) / MAX_SHARED_PICK;
        return block == 0 ? members(kind, timeoutSeconds) : blockMembers(kind, timeoutSeconds, block);
    }

    /** The set the kernel writes a client's "client . frontend . index" into. */
    String affinity() {
        return kind.prefix + "-affinity";
    }

    private String prefix() {
        return prefix(kind, timeoutSeconds);
    }

    private static String prefix(PickTree.Kind kind, long timeoutSeconds) {
        return kind.prefix + "-sticky-" + timeoutSeconds;
    }

    /** The leaf a sticky port of k endpoints goes to from the tree's leaf for k. */
    String leaf(int k) {
        return leaf(kind, timeoutSeconds, k);
    }

    static String leaf(PickTree.Kind kind, long timeoutSeconds, int k) {
        return prefix(kind, timeoutSeconds) + "-pick-" + k;
    }

    /** The chain that looks the client up at each index below n, in order. */
    private String check(int n) {
        return prefix() + "-check-" + n;
    }

    /**
     * The chain that remembers index i of a port in the endpoint bucket up to hi: slots are per
     * bucket because each looks up its bucket's endpoint map (see {@link PickTree#bucket}).
     */
    private String slot(int hi, int i) {
        return prefix() + "-" + PickTree.bucket(hi) + "-slot-" + i;
    }

    /** The map from index to {@link #slot} of the bucket up to hi. */
    private String slots(int hi) {
        return prefix() + "-" + PickTree.bucket(hi) + "-slots";
    }

    /** The sets and chains of this kind and timeout. */
    void declare() {
        DataType a = b.addr();
        if (kind.ip) {
            b.set(NftSet.set(nf, t, members(), a, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment(whose("IP ports") + " with ClientIP affinity of " + timeoutSeconds + " s"));
            b.set(NftSet.set(nf, t, affinity(), a, a, DataType.INET_PROTO, DataType.INET_SERVICE, DataType.MARK)
                    .withFlags(NfTablesUapi.NFT_SET_EVAL).withTimeout(NftRenderer.AFFINITY_DEFAULT_MS)
                    .withSize(NftRenderer.KERNEL_WRITTEN_SET_SIZE)
                    .withComment("client . IP port . index: ClientIP affinity"));
        } else {
            b.set(NftSet.set(nf, t, members(), DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment(whose("NodePorts") + " with ClientIP affinity of " + timeoutSeconds + " s"));
            b.set(NftSet.set(nf, t, affinity(), a, DataType.INET_PROTO, DataType.INET_SERVICE, DataType.MARK)
                    .withFlags(NfTablesUapi.NFT_SET_EVAL).withTimeout(NftRenderer.AFFINITY_DEFAULT_MS)
                    .withSize(NftRenderer.KERNEL_WRITTEN_SET_SIZE)
                    .withComment("client . NodePort . index: ClientIP affinity"));
        }
        b.unmanaged.add(affinity());
        // Per endpoint bucket: the slots and their map.
        for (int hi : PickTree.sharedBuckets()) {
            declareSlots(hi);
        }
        // Per power of two n: the check of the indices below n, each to its slot in n's bucket.
        for (int n = 1; n <= MAX_SHARED_PICK; n *= 2) {
            declareCheck(n, PickTree.bucketHigh(n));
        }
        for (int k = 1; k <= MAX_SHARED_PICK; k++) {
            declareLeaf(k, Integer.highestOneBit(2 * k - 1));
        }
        // Per block with a sticky port: its set, slots and check of every index up to the block's
        // highest count (a client may remember any of them), and its leaves.
        for (int block : blocks) {
            int lo = block * MAX_SHARED_PICK + 1;
            int hi = lo + MAX_SHARED_PICK - 1;
            String members = blockMembers(kind, timeoutSeconds, block);
            NftSet set = kind.ip ? NftSet.set(nf, t, members, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                    : NftSet.set(nf, t, members, DataType.INET_PROTO, DataType.INET_SERVICE);
            b.set(set.withComment(whose(kind.ip ? "IP ports" : "NodePorts") + " with ClientIP affinity of "
                    + timeoutSeconds + " s and " + lo + " to " + hi + " endpoints"));
            declareSlots(hi);
            declareCheck(hi, hi);
            for (int k = lo; k <= hi; k++) {
                declareLeaf(k, hi);
            }
        }
    }

    /** The slot chains of the indices of bucket {@code hi} (below hi), on its endpoint map, and the map to them. */
    private void declareSlots(int hi) {
        b.set(NftSet.map(nf, t, slots(hi), DataType.VERDICT, DataType.MARK).withComment(
                "index to the chain that remembers it and DNATs to its endpoint, for " + PickTree.bucket(hi) + " endpoints"));
        for (int i = 0; i < hi; i++) {
            b.element(slots(hi), SetElement.of(Bytes.host32(i), Verdict.goTo(slot(hi, i))));
            List<Expr> remember = RuleParts.remember(clientKey(i), affinity(), timeoutSeconds * 1000L);
            // Remember, then DNAT, in two rules: a refused update (a full affinity set, at
            // NftRenderer.KERNEL_WRITTEN_SET_SIZE) ends its rule, so a full set costs a new client its
            // stickiness, not its connection (in one rule, it was left without DNAT: refused).
            // Still one lookup of the endpoint map per slot chain: the kernel checks each element
            // added to a map against every rule that looks it up.
            b.chain(Chain.regular(nf, t, slot(hi, i)), List.of(b.rule(slot(hi, i), remember),
                    b.rule(slot(hi, i), p.endpointAt(frontend(0), kind.endpoints(hi), i))));
        }
    }

    /** The check of the indices below n, each jumping to its slot chain in bucket {@code hi}. */
    private void declareCheck(int n, int hi) {
        List<Rule> checks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            checks.add(b.rule(check(n), concat(concat(clientKey(i), RuleParts.lookup(affinity())),
                    verdict(Verdict.jump(slot(hi, i))))));
        }
        b.chain(Chain.regular(nf, t, check(n)), checks);
    }

    /**
     * The leaf for k endpoints: the check of the indices below n (the client's remembered index,
     * if still one of the port's), else a draw among k through the slots of k's bucket.
     */
    private void declareLeaf(int k, int n) {
        b.chain(Chain.regular(nf, t, leaf(k)), List.of(
                b.rule(leaf(k), List.of(verdict(Verdict.jump(check(n))))),
                b.rule(leaf(k), RuleParts.randomIndexVmap(k, slots(PickTree.bucketHigh(k))))));
    }

    /** "IP ports", or "IP ports of policy Local (their external traffic)" for the local trees'. */
    private String whose(String ports) {
        return kind.local ? ports + " of policy Local (their external traffic)" : ports;
    }

    /** The frontend's loads from 32-bit slot {@code slot}: the same key the tree reads. */
    private List<Expr> frontend(int slot) {
        return kind.ip ? p.daddrProtoPort(slot) : RuleParts.protoPort(slot);
    }

    /** {@code ip saddr . FRONTEND . INDEX} from register 1 on. */
    private List<Expr> clientKey(int index) {
        int s = p.addrSlots();
        List<Expr> out = new ArrayList<>();
        out.add(p.loadSaddr(reg(0)));
        List<Expr> front = frontend(s);
        out.addAll(front);
        out.add(Immediate.value(reg(s + RuleParts.slots(front)), Bytes.host32(index)));
        return out;
    }
}
