package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.RuleParts.concat;
import static io.nftproxy.proxy.render.RuleParts.reg;
import static io.nftproxy.proxy.render.RuleParts.verdict;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.function.IntFunction;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Dynset;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.netlink.nft.expr.Lookup;
import io.nftproxy.netlink.nft.expr.Payload;

/**
 * ClientIP session affinity for ports that are only data, with kube-proxy's semantics: a client
 * keeps its endpoint for as long as that endpoint stays, whatever else comes and goes, and the
 * clients of an endpoint that went pick again. Shared chains per tree ({@link PickTree.Kind}:
 * the cluster trees, and the local trees external traffic of policy Local picks through, each
 * with its own affinity set), written while some sticky port uses them; a port is only elements.
 *
 * <p>A client is remembered by its endpoint's <em>number</em> ({@link AffinityIds}), which the
 * endpoint holds for as long as it stays, not by the index it was drawn at (an index moves to
 * another endpoint when one goes). Its entry in the kind's affinity set is
 * "client . frontend . number", written after the DNAT, where the packet carries the endpoint
 * chosen: {@code sticky-remember}, reached from the filter chains for a new DNATed connection,
 * finds "frontend . endpoint" in the kind's pairs set and reads the number from its membership in
 * one set per bit ({@code ip-sticky-id-bit-B}) down a tree of chains, whose leaves write the entry
 * with the port's timeout ({@code sticky-ips-T}). The tree reads data: the number is not the
 * result of a lookup used as another's key, which the kernel would run but nft (1.0.6) aborts
 * listing ("netlink_parse_concat_expr: Assertion 'consumed > 0'", tried: a lookup keyed by a map's
 * result, an update whose data is one, a key concatenating one).
 *
 * <p>Before a new connection goes down the tree, the tree's root sends a sticky port ({@code sticky-ips})
 * to {@code ip-sticky-check}, which goes to the check of the port's range of numbers ({@code
 * ip-sticky-check-1-8}: numbers below 8; a set per range, {@code sticky-ips-ids-1-8}, says which):
 * one rule per number asks whether the client is remembered by it and jumps to its slot, which
 * DNATs to the endpoint holding the number ({@code ip-sticky-endpoints-1-8}, "frontend . number"
 * to endpoint) or, when none does now, deletes the entry and returns, so that the check goes on
 * and then the leaf draws. An entry is refreshed only by a connection sent to its endpoint: the
 * entry of an endpoint that went expires, or goes at its client's next connection.
 *
 * <p>What stays of nftproxy's own: a client is remembered per frontend (each ClusterIP, external
 * IP, load-balancer IP, and the NodePort), where kube-proxy keeps one memory per service port for
 * all of them: the shared chains know the packet's frontend, and naming the service port behind
 * it needs a map's result in a key, the construct nft cannot list (above).
 *
 * <p>Ranges past {@link NftRenderer#MAX_SHARED_PICK} numbers, as every range, are declared only
 * while some port's numbers are in them: the globals are given the range sets the services fill.
 */
final class StickyPick extends RenderPart {
    private final PickTree.Kind kind;
    /** The affinity timeouts (seconds) of this kind's sticky ports. */
    private final SortedSet<Long> timeouts;
    /** The ranges of numbers some port of this kind is in (their highest numbers plus one: 8, 16 … 1024), ascending. */
    private final List<Integer> ranges = new ArrayList<>();

    /**
     * @param demanded the on-demand sets the services fill, of every kind (the others' are ignored)
     */
    StickyPick(FragmentBuilder b, PickTree.Kind kind, SortedSet<Long> timeouts, Set<String> demanded) {
        super(b);
        this.kind = kind;
        this.timeouts = timeouts;
        for (int hi : allRanges()) {
            if (demanded.contains(rangeMembers(kind, hi))) {
                ranges.add(hi);
            }
        }
    }

    /** Every range of numbers a port may need: the endpoint buckets' highest counts (8, 16, … 128, 256, … 1024). */
    static List<Integer> allRanges() {
        List<Integer> out = new ArrayList<>(PickTree.sharedBuckets());
        for (int block = 1; block < PickTree.BLOCKS; block++) {
            out.add((block + 1) * NftRenderer.MAX_SHARED_PICK);
        }
        return out;
    }

    /** The set of this kind's frontends with ClientIP affinity of {@code timeoutSeconds}. */
    static String members(PickTree.Kind kind, long timeoutSeconds) {
        return ObjectName.format(ObjectName.Scheme.STICKY_MEMBERS, kind, null, null, Math.toIntExact(timeoutSeconds));
    }

    /** The set of this kind's frontends with ClientIP affinity, of any timeout: the tree's root sends them to the check. */
    static String allMembers(PickTree.Kind kind) {
        return ObjectName.format(ObjectName.Scheme.STICKY_MEMBERS_ALL, kind, null, null);
    }

    /** What the names of this kind's sticky member sets start with. */
    static String membersPrefix(PickTree.Kind kind) {
        return ObjectName.membersBase(kind) + "-";
    }

    /** The set of this kind's sticky frontends whose numbers are in the range up to {@code hi}: declared while one is. */
    static String rangeMembers(PickTree.Kind kind, int hi) {
        return PickTree.bucketName(ObjectName.Scheme.STICKY_RANGE_MEMBERS, kind, hi);
    }

    /** What the names of the range sets start with ({@link #rangeMembers}): sets declared on demand. */
    static String rangeMembersPrefix(PickTree.Kind kind) {
        return membersPrefix(kind) + "ids-";
    }

    /** The set the kernel writes a client's "client . frontend . number" into. */
    static String affinity(PickTree.Kind kind) {
        return ObjectName.format(ObjectName.Scheme.AFFINITY, kind, null, null);
    }

    /** "frontend . number" to endpoint, for the range up to {@code hi}. */
    static String endpoints(PickTree.Kind kind, int hi) {
        return PickTree.bucketName(ObjectName.Scheme.STICKY_ENDPOINTS, kind, hi);
    }

    /** "frontend . endpoint address . port" of every sticky port's endpoint: what a DNAT's result is checked against. */
    static String pairs(PickTree.Kind kind) {
        return ObjectName.format(ObjectName.Scheme.STICKY_PAIRS, kind, null, null);
    }

    /** The pairs whose endpoint's number has {@code bit} set. */
    static String idBit(PickTree.Kind kind, int bit) {
        return ObjectName.format(ObjectName.Scheme.STICKY_ID_BIT, kind, null, null, bit);
    }

    /** The chain the tree's root sends a sticky port to: on to the check of its range. */
    static String check(PickTree.Kind kind) {
        return ObjectName.format(ObjectName.Scheme.STICKY_CHECK, kind, null, null);
    }

    private String check(int hi) {
        return PickTree.bucketName(ObjectName.Scheme.STICKY_RANGE_CHECK, kind, hi);
    }

    private String slot(int hi, int id) {
        int top = PickTree.bucketHigh(hi);
        return ObjectName.format(ObjectName.Scheme.STICKY_SLOT, kind, null, null, PickTree.bucketLow(top), top, id);
    }

    /** The chain of the remembering tree that still tells numbers lo..hi apart. */
    private String remember(int lo, int hi) {
        return ObjectName.format(ObjectName.Scheme.STICKY_REMEMBER, kind, null, null, lo, hi);
    }

    /** Whether this kind's frontends are IP ports (else NodePorts). */
    boolean ip() {
        return kind.ip;
    }

    /** The remembering tree's root, or null when no port of this kind has a number yet. */
    String rememberRoot() {
        return ranges.isEmpty() ? null : remember(0, treeSize() - 1);
    }

    private int highest() {
        return ranges.get(ranges.size() - 1);
    }

    /** The sets and chains of this kind. */
    void declare() {
        DataType a = b.addr();
        for (long timeout : timeouts) {
            b.set(frontendSet(members(kind, timeout)).withComment(
                    whose(kind.ip ? "IP ports" : "NodePorts") + " with ClientIP affinity of " + timeout + " s"));
        }
        b.set(frontendSet(allMembers(kind)).withComment(whose(kind.ip ? "IP ports" : "NodePorts") + " with ClientIP affinity"));
        List<DataType> memory = new ArrayList<>(List.of(a));
        memory.addAll(frontendTypes());
        memory.add(DataType.MARK);
        b.set(NftSet.set(nf, t, affinity(kind), memory.toArray(new DataType[0]))
                .withFlags(NfTablesUapi.NFT_SET_EVAL).withTimeout(NftRenderer.AFFINITY_DEFAULT_MS)
                .withSize(NftRenderer.KERNEL_WRITTEN_SET_SIZE)
                .withComment("client . " + (kind.ip ? "IP port" : "NodePort") + " . endpoint number: ClientIP affinity"));
        b.unmanaged.add(affinity(kind));
        List<DataType> pair = new ArrayList<>(frontendTypes());
        pair.add(a);
        pair.add(DataType.INET_SERVICE);
        b.set(NftSet.set(nf, t, pairs(kind), pair.toArray(new DataType[0])).withComment(
                whose(kind.ip ? "sticky IP ports" : "sticky NodePorts") + " . their endpoints"));
        if (ranges.isEmpty()) {
            b.chain(Chain.regular(nf, t, check(kind)), List.of()); // what the leaves jump to: nothing to check yet
            return;
        }
        int bits = Integer.numberOfTrailingZeros(treeSize());
        for (int bit = 0; bit < bits; bit++) {
            b.set(NftSet.set(nf, t, idBit(kind, bit), pair.toArray(new DataType[0])).withComment(
                    "the same, whose endpoint's number has bit " + bit + " set"));
        }
        List<Rule> dispatch = new ArrayList<>();
        for (int hi : ranges) {
            b.set(frontendSet(rangeMembers(kind, hi)).withComment(
                    whose(kind.ip ? "sticky IP ports" : "sticky NodePorts") + " with endpoint numbers up to " + (hi - 1)));
            List<DataType> key = new ArrayList<>(frontendTypes());
            key.add(DataType.MARK);
            b.set(new NftSet(nf, t, endpoints(kind, hi), key, DataType.concat(List.of(a, DataType.INET_SERVICE)), 0, 0,
                    (kind.ip ? "IP port" : "NodePort") + " . endpoint number to " + (kind.local ? "this node's " : "")
                            + "endpoint address . port, numbers up to " + (hi - 1)));
            dispatch.add(b.rule(check(kind), concat(concat(frontend(0), RuleParts.lookup(rangeMembers(kind, hi))),
                    verdict(Verdict.goTo(check(hi))))));
            declareCheck(hi);
        }
        b.chain(Chain.regular(nf, t, check(kind)), dispatch);
        declareRemember(0, treeSize() - 1);
    }

    /** The numbers the remembering tree tells apart: the power of two at or above the highest range (a block's may not be one). */
    private int treeSize() {
        return Integer.highestOneBit(2 * highest() - 1);
    }

    /** The check of the numbers below hi: the client remembered by one jumps to its slot. */
    private void declareCheck(int hi) {
        List<Rule> checks = new ArrayList<>();
        for (int id = 0; id < hi; id++) {
            checks.add(b.rule(check(hi), concat(concat(clientKey(id), RuleParts.lookup(affinity(kind))),
                    verdict(Verdict.jump(slot(hi, id))))));
            // DNAT to the endpoint holding the number; when none does now, the entry goes (the
            // kernel deletes it: it is refreshed only by connections sent to its endpoint) and
            // the check goes on.
            List<Expr> forget = new ArrayList<>(clientKey(id));
            forget.add(new Dynset(affinity(kind), Dynset.NFT_DYNSET_OP_DELETE, NfTablesUapi.NFT_REG_1, 0, 0));
            b.chain(Chain.regular(nf, t, slot(hi, id)), List.of(
                    b.rule(slot(hi, id), p.endpointAt(frontend(0), endpoints(kind, hi), id)),
                    b.rule(slot(hi, id), forget)));
        }
        b.chain(Chain.regular(nf, t, check(hi)), checks);
    }

    /**
     * The chain telling numbers lo..hi apart (a power of two of them) by the highest bit that
     * differs, and the chains below; the last tells two apart and writes the entry, once per
     * timeout of this kind (the port's own timeout set decides which).
     */
    private void declareRemember(int lo, int hi) {
        String name = remember(lo, hi);
        int half = (hi - lo + 1) / 2;
        int bit = Integer.numberOfTrailingZeros(half);
        List<Rule> rules = new ArrayList<>();
        if (half == 1) {
            for (long timeout : timeouts) {
                for (int id : new int[] {hi, lo}) {
                    List<Expr> e = new ArrayList<>(pairLoads());
                    e.add(id == hi ? RuleParts.lookup(idBit(kind, 0)) : RuleParts.notIn(idBit(kind, 0)));
                    e.addAll(originalFrontend(0));
                    e.add(RuleParts.lookup(members(kind, timeout)));
                    e.addAll(memoryKey(id));
                    e.add(new Dynset(affinity(kind), Dynset.NFT_DYNSET_OP_UPDATE, NfTablesUapi.NFT_REG_1, 0, timeout * 1000L));
                    rules.add(b.rule(name, e));
                }
            }
        } else {
            rules.add(b.rule(name, concat(concat(pairLoads(), RuleParts.lookup(idBit(kind, bit))),
                    verdict(Verdict.goTo(remember(lo + half, hi))))));
            rules.add(b.rule(name, List.of(verdict(Verdict.goTo(remember(lo, lo + half - 1))))));
            declareRemember(lo + half, hi);
            declareRemember(lo, lo + half - 1);
        }
        b.chain(Chain.regular(nf, t, name), rules);
    }

    /** "IP ports", or "IP ports of policy Local (their external traffic)" for the local trees'. */
    private String whose(String ports) {
        return kind.local ? ports + " of policy Local (their external traffic)" : ports;
    }

    private NftSet frontendSet(String name) {
        return NftSet.set(nf, t, name, frontendTypes().toArray(new DataType[0]));
    }

    private List<DataType> frontendTypes() {
        return kind.ip ? List.of(b.addr(), DataType.INET_PROTO, DataType.INET_SERVICE)
                : List.of(DataType.INET_PROTO, DataType.INET_SERVICE);
    }

    /** The frontend's loads from 32-bit slot {@code slot}, before the DNAT: the same key the tree reads. */
    private List<Expr> frontend(int slot) {
        return kind.ip ? p.daddrProtoPort(slot) : RuleParts.protoPort(slot);
    }

    /** The 32-bit slots the frontend takes. */
    private int frontendSlots() {
        return kind.ip ? p.addrSlots() + 2 : 2;
    }

    /** The frontend's loads from 32-bit slot {@code slot} after the DNAT, from the connection's original direction. */
    private List<Expr> originalFrontend(int slot) {
        return kind.ip ? p.originalDaddrProtoPort(slot) : RuleParts.originalProtoPort(slot);
    }

    /** After the DNAT, "frontend . endpoint address . port": the key of the pairs and the number's bit sets. */
    private List<Expr> pairLoads() {
        List<Expr> out = new ArrayList<>(originalFrontend(0));
        int s = frontendSlots();
        out.add(p.loadDaddr(reg(s)));
        out.add(Payload.transport(reg(s + p.addrSlots()), 2, 2));
        return out;
    }

    /** {@code ip saddr . FRONTEND . NUMBER} from register 1 on, before the DNAT. */
    private List<Expr> clientKey(int id) {
        return clientKey(this::frontend, id);
    }

    /** The same key after the DNAT: the frontend from the connection's original direction. */
    private List<Expr> memoryKey(int id) {
        return clientKey(this::originalFrontend, id);
    }

    private List<Expr> clientKey(IntFunction<List<Expr>> frontendAt, int id) {
        int s = p.addrSlots();
        List<Expr> out = new ArrayList<>();
        out.add(p.loadSaddr(reg(0)));
        out.addAll(frontendAt.apply(s));
        out.add(Immediate.value(reg(s + frontendSlots()), Bytes.host32(id)));
        return out;
    }

    /** The rule of {@code sticky-remember} that sends a connection DNATed to an endpoint of this kind's sticky frontends down its tree. */
    List<Expr> toRoot() {
        List<Expr> out = new ArrayList<>(pairLoads());
        out.add(Lookup.member(pairs(kind), NfTablesUapi.NFT_REG_1));
        out.add(verdict(Verdict.jump(rememberRoot())));
        return out;
    }
}
