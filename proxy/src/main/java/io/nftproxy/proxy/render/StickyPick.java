package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.NftRenderer.MAX_SHARED_PICK;
import static io.nftproxy.proxy.render.RuleParts.concat;
import static io.nftproxy.proxy.render.RuleParts.reg;
import static io.nftproxy.proxy.render.RuleParts.verdict;

import java.util.ArrayList;
import java.util.List;

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
 */
final class StickyPick extends RenderPart {
    private final PickTree.Kind kind;
    private final long timeoutSeconds;

    StickyPick(FragmentBuilder b, PickTree.Kind kind, long timeoutSeconds) {
        super(b);
        this.kind = kind;
        this.timeoutSeconds = timeoutSeconds;
    }

    /** The set of this kind's frontends with this timeout (ports with affinity that are only data). */
    String members() {
        return members(kind, timeoutSeconds);
    }

    /** {@link #members()} by name alone, for the services' elements and the tree's leaves. */
    static String members(PickTree.Kind kind, long timeoutSeconds) {
        return "sticky-" + (kind.local ? "local-" : "") + (kind.ip ? "ips" : "nodeports") + "-" + timeoutSeconds;
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
                    .withComment("client . IP port . index: ClientIP affinity"));
        } else {
            b.set(NftSet.set(nf, t, members(), DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment(whose("NodePorts") + " with ClientIP affinity of " + timeoutSeconds + " s"));
            b.set(NftSet.set(nf, t, affinity(), a, DataType.INET_PROTO, DataType.INET_SERVICE, DataType.MARK)
                    .withFlags(NfTablesUapi.NFT_SET_EVAL).withTimeout(NftRenderer.AFFINITY_DEFAULT_MS)
                    .withComment("client . NodePort . index: ClientIP affinity"));
        }
        b.unmanaged.add(affinity());
        // Per endpoint bucket: the slots and their map.
        for (int hi : PickTree.sharedBuckets()) {
            b.set(NftSet.map(nf, t, slots(hi), DataType.VERDICT, DataType.MARK).withComment(
                    "index to the chain that remembers it and DNATs to its endpoint, for " + PickTree.bucket(hi) + " endpoints"));
            for (int i = 0; i < hi; i++) {
                b.element(slots(hi), SetElement.of(Bytes.host32(i), Verdict.goTo(slot(hi, i))));
                List<Expr> remember = RuleParts.remember(clientKey(i), affinity(), timeoutSeconds * 1000L);
                b.chain(Chain.regular(nf, t, slot(hi, i)), List.of(b.rule(slot(hi, i),
                        concat(remember, p.endpointAt(frontend(0), kind.endpoints(hi), i)))));
            }
        }
        // Per power of two n: the check of the indices below n, each to its slot in n's bucket.
        for (int n = 1; n <= MAX_SHARED_PICK; n *= 2) {
            int hi = PickTree.bucketHigh(n);
            List<Rule> checks = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                checks.add(b.rule(check(n), concat(concat(clientKey(i), RuleParts.lookup(affinity())),
                        verdict(Verdict.jump(slot(hi, i))))));
            }
            b.chain(Chain.regular(nf, t, check(n)), checks);
        }
        for (int k = 1; k <= MAX_SHARED_PICK; k++) {
            b.chain(Chain.regular(nf, t, leaf(k)), List.of(
                    b.rule(leaf(k), List.of(verdict(Verdict.jump(check(Integer.highestOneBit(2 * k - 1)))))),
                    b.rule(leaf(k), RuleParts.randomIndexVmap(k, slots(PickTree.bucketHigh(k))))));
        }
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
