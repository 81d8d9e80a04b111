package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.NftRenderer.MAX_PLAIN_PICK;
import static io.nftproxy.proxy.render.NftRenderer.MAX_SHARED_PICK;
import static io.nftproxy.proxy.render.NftRenderer.MAX_TREE_PICK;
import static io.nftproxy.proxy.render.RuleParts.concat;
import static io.nftproxy.proxy.render.RuleParts.verdict;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

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
 * and a binary tree of shared chains reads the bits, highest first, down to its last level, the
 * chain that tells k from its neighbour by bit 0 and draws among k ({@code ip-pick-3-4} for 3 and
 * 4; a chain per count under it was 128 more chains a tree for the same lookups).
 *
 * <p>Why bit sets, and not a verdict map or a data map feeding one: docs/ruleset.md, "The layout"
 * (a verdict element changed makes the kernel validate the table; nft cannot list the other).
 *
 * <p>A new connection to a plain port pays {@code log2(MAX_SHARED_PICK)} more set lookups (7).
 * One tree per kind of frontend: IP ports ({@code ip daddr . meta l4proto . th dport}) and
 * NodePorts ({@code meta l4proto . th dport}), over the cluster's endpoints and over this node's
 * ({@link Kind}). A tree, its maps and bit sets are declared while some frontend picks through it
 * ({@link Kind#inUse}): the first of its kind brings it, the last takes it away. Of the tree, only
 * the chains that lead to the leaves of a {@link #bucket} of counts some port is in, and of those
 * only the ones whose two halves are both in use (a bit test no port in use could fail is left out,
 * the parent going straight to the half in use): a cluster whose services have at most 8
 * endpoints carries 8 chains a tree instead of 127, and a new connection to one of them tests 3
 * bits instead of 7. The first port whose count enters another bucket brings that bucket's map and
 * subtree (7 chains for 9-16, 63 for 65-128), which the kernel validates once; the last one out
 * takes them away.
 *
 * <p>Counts above MAX_SHARED_PICK, up to MAX_PLAIN_PICK, go in blocks of MAX_SHARED_PICK: a port
 * whose k − 1 is {@code 128·h + l} is a member of the block set {@code KIND-count-block-h} and of
 * the bit sets of l, and the root sends members of a block set to that block's tree, which reads
 * the same bit sets down to its last level {@code KIND-pick-(128·h+1)-(128·h+2)} … A block's set
 * and tree are declared only while some port's count is in it (the globals are given the block
 * sets the services' fragments fill, see {@link #isOnDemandSet}): a cluster
 * without such services carries none of it, and one with them validates a block's chains once,
 * when its first port comes, not on every change.
 *
 * <p>Counts above MAX_PLAIN_PICK (to MAX_TREE_PICK) are in blocks too, but the root does not ask
 * for them (a lookup per block in use would be every connection's): {@code services} sends such a
 * frontend straight to its block's tree by a verdict element ({@code service-chains}: frontend to
 * {@code goto KIND-pick-(128·h+1)-(128·h+128)}), and the tree reads its bit sets as for any
 * block. A new connection to it then pays one verdict-map lookup and seven bit sets, whatever its
 * count; an endpoint added or removed within its block changes elements without verdicts, and
 * only a count that crosses into another block changes its verdict element (the kernel then
 * validates the table, as when a block is first used). An external frontend of policy Local
 * reaches its cluster count's block the same way, from the external chain ({@code
 * ip-external-local-blocks}). (Only the trees of the cluster's endpoints, {@link Kind#IP} and
 * {@link Kind#NODEPORT}: a port with affinity or with this node's endpoints past
 * MAX_PLAIN_PICK has chains of its own.)
 *
 * <p>The last level looks endpoints up in one map per bucket of counts ({@link #bucket}), not in one
 * map for all: the kernel checks each element added to a map against every rule looking it up.
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
        IP("ip", true, false, TableNames.SERVICE_ENDPOINTS),
        NODEPORT("nodeport", false, false, TableNames.NODEPORT_ENDPOINTS),
        IP_LOCAL("ip-local", true, true, TableNames.LOCAL_ENDPOINTS),
        NODEPORT_LOCAL("nodeport-local", false, true, TableNames.NODEPORT_LOCAL_ENDPOINTS);

        final String prefix;
        /** Keyed by "address . protocol . port" (IP ports), else by "protocol . port" (NodePorts). */
        final boolean ip;
        /** Over this node's endpoints (external traffic of policy Local). */
        final boolean local;
        private final String endpointsBase;

        Kind(String prefix, boolean ip, boolean local, String endpointsBase) {
            this.prefix = prefix;
            this.ip = ip;
            this.local = local;
            this.endpointsBase = endpointsBase;
        }

        /**
         * What a fragment that picks through this tree demands of the globals ({@link
         * Fragment#demands}): the tree, its maps and leaves, declared while some frontend
         * picks through it. Not a set's name (nothing of ours holds a colon).
         */
        String inUse() {
            return "tree:" + prefix;
        }

        /** The tree of the same kind of frontend over this node's endpoints. */
        Kind local() {
            return ip ? IP_LOCAL : NODEPORT_LOCAL;
        }

        /** The set of ports whose endpoint count minus one has {@code bit} set. */
        String bitSet(int bit) {
            return CountSetNames.BITS_BY_KIND[ordinal()][bit];
        }

        /** The set of ports whose endpoint count minus one is in block {@code block} (1 for 129..256). */
        String blockSet(int block) {
            return CountSetNames.BLOCKS_BY_KIND[ordinal()][block];
        }

        /** The root of the tree of block {@code block} (1 for 129..256), where a count in it is sent. */
        String blockRoot(int block) {
            return chain(block * MAX_SHARED_PICK + 1, (block + 1) * MAX_SHARED_PICK);
        }

        /** The verdict that sends a frontend of {@code k} endpoints, past MAX_PLAIN_PICK, to its block's tree. */
        Verdict toBlock(int k) {
            return Verdict.goTo(blockRoot(blockOf(k)));
        }

        /** The chain that still chooses among counts {@code lo}..{@code hi}; the root chooses among all. */
        String chain(int lo, int hi) {
            return ObjectName.format(ObjectName.Scheme.PICK, this, null, null, lo, hi);
        }

        String root() {
            return chain(1, MAX_SHARED_PICK);
        }

        /**
         * The chain that draws among k endpoints: the tree's last level, which tells two counts
         * apart (k and its neighbour, 2m + 1 and 2m + 2) and draws itself.
         */
        String leaf(int k) {
            int lo = (k - 1) / 2 * 2 + 1;
            return chain(lo, lo + 1);
        }

        /** What the names of this kind's endpoint maps start with. */
        String endpointsBase() {
            return endpointsBase;
        }

        /**
         * The map from "frontend . index" to endpoint that the leaves for k endpoints look up:
         * one per {@link #bucket} of counts, e.g. {@code service-endpoints-9-16}.
         */
        String endpoints(int k) {
            if (k > MAX_PLAIN_PICK && k <= MAX_TREE_PICK) {
                return bucketName(ObjectName.Scheme.ENDPOINTS, this, k); // a block of the verdict maps' (rare: made when asked)
            }
            if (k < 1 || k > MAX_PLAIN_PICK) {
                throw new IllegalArgumentException("no shared endpoint map for " + k + " endpoints");
            }
            return EndpointMapNames.BY_KIND[ordinal()][k];
        }

        /** The endpoint maps of every bucket up to MAX_SHARED_PICK, and of the blocks in use. */
        List<String> endpointMaps(List<Integer> blocks) {
            List<String> out = new ArrayList<>();
            for (int hi : sharedBuckets()) {
                out.add(endpoints(hi));
            }
            for (int block : blocks) {
                out.add(endpoints(block * MAX_SHARED_PICK + 1));
            }
            return out;
        }

        /** What its bit sets count, for their comments. */
        private String counted() {
            return (ip ? "IP ports" : "NodePorts") + (local ? " of policy Local whose local" : " whose");
        }
    }

    /** Blocks of MAX_SHARED_PICK counts the root sends on, the first being the tree of every kind in use. */
    static final int BLOCKS = MAX_PLAIN_PICK / MAX_SHARED_PICK;
    /** Blocks of MAX_SHARED_PICK counts in all: from BLOCKS on, {@code services}' verdict maps send on to them. */
    static final int TREE_BLOCKS = MAX_TREE_PICK / MAX_SHARED_PICK;

    static {
        if (Integer.bitCount(MAX_SHARED_PICK) != 1 || MAX_PLAIN_PICK % MAX_SHARED_PICK != 0
                || MAX_TREE_PICK % MAX_SHARED_PICK != 0) {
            throw new AssertionError("the tree halves the counts: MAX_SHARED_PICK must be a power of two,"
                    + " MAX_PLAIN_PICK and MAX_TREE_PICK multiples of it");
        }
    }

    /**
     * The counts whose leaves share an endpoint map, as "lo-hi": 1-8, then the powers of two
     * (9-16, 17-32, 33-64, 65-128), then the blocks above MAX_SHARED_PICK.
     *
     * <p>Why not one map for every count: the kernel checks each element added to a map against
     * every rule that looks it up (docs/ruleset.md, "Why the endpoint maps are split by count",
     * with the figures). A bucket up to n is looked up by at most n/2 leaves (the sticky ports'
     * maps by number are split the same way, each looked up by its range's slots). The price: a
     * port whose count leaves its bucket moves its endpoints to the next map in the same
     * transaction. Counts up to {@link #SMALL_BUCKET}, most services', share one map, looked up
     * by as few rules as 9-16's, so that their changes move nothing.
     */
    static String bucket(int k) {
        int hi = bucketHigh(k);
        return bucketLow(hi) + "-" + hi;
    }

    /** The name of scheme {@code s} of {@code kind} for the bucket of counts {@code k} is in ({@code …-lo-hi}). */
    static String bucketName(ObjectName.Scheme s, Kind kind, int k) {
        int hi = bucketHigh(k);
        return ObjectName.format(s, kind, null, null, bucketLow(hi), hi);
    }

    /** Most services' endpoint counts: one endpoint map for all of them (see {@link #bucket}). */
    static final int SMALL_BUCKET = 8;

    /** The highest count of k's bucket. */
    static int bucketHigh(int k) {
        if (k < 1 || k > MAX_TREE_PICK) {
            throw new IllegalArgumentException("no shared endpoint map for " + k + " endpoints");
        }
        if (k > MAX_SHARED_PICK) {
            return ((k - 1) / MAX_SHARED_PICK + 1) * MAX_SHARED_PICK;
        }
        return Math.max(SMALL_BUCKET, Integer.highestOneBit(2 * k - 1));
    }

    static int bucketLow(int hi) {
        return hi > MAX_SHARED_PICK ? hi - MAX_SHARED_PICK + 1 : hi == SMALL_BUCKET ? 1 : hi / 2 + 1;
    }

    /** The highest counts of the buckets up to MAX_SHARED_PICK, ascending (8, 16, … 128). */
    static List<Integer> sharedBuckets() {
        List<Integer> out = new ArrayList<>();
        for (int hi = SMALL_BUCKET; hi <= MAX_SHARED_PICK; hi *= 2) {
            out.add(hi);
        }
        return out;
    }

    /**
     * The bit and block sets' names, made once: a full sync asks them for every port (a holder,
     * as the kinds' names are made by ObjectName, whose schemes read the kinds).
     */
    private static final class CountSetNames {
        // From NftRenderer's constants, not PickTree's: a holder that started PickTree's own
        // initialisation (which asks it for names) could deadlock two threads.
        private static final int BIT_COUNT = Integer.numberOfTrailingZeros(MAX_SHARED_PICK);
        private static final int BLOCK_COUNT = MAX_PLAIN_PICK / MAX_SHARED_PICK;
        static final String[][] BITS_BY_KIND = new String[Kind.values().length][BIT_COUNT];
        static final String[][] BLOCKS_BY_KIND = new String[Kind.values().length][BLOCK_COUNT];

        static {
            for (Kind kind : Kind.values()) {
                for (int bit = 0; bit < BIT_COUNT; bit++) {
                    BITS_BY_KIND[kind.ordinal()][bit] = ObjectName.format(ObjectName.Scheme.COUNT_BIT, kind, null, null, bit);
                }
                for (int block = 1; block < BLOCK_COUNT; block++) {
                    BLOCKS_BY_KIND[kind.ordinal()][block] = ObjectName.format(ObjectName.Scheme.COUNT_BLOCK, kind, null, null, block);
                }
            }
        }
    }

    /**
     * {@link Kind#endpoints}'s names by kind and count, one string per bucket: asked for every
     * frontend of every port rendered (millions in a first sync at 100k services). A class of its
     * own, set up on first use, once Kind's constants exist.
     */
    private static final class EndpointMapNames {
        static final String[][] BY_KIND = new String[Kind.values().length][];

        static {
            for (Kind kind : Kind.values()) {
                String[] names = new String[MAX_PLAIN_PICK + 1];
                for (int k = 1; k <= MAX_PLAIN_PICK; k++) {
                    names[k] = k > 1 && bucketLow(bucketHigh(k)) != k ? names[k - 1] : bucketName(ObjectName.Scheme.ENDPOINTS, kind, k);
                }
                BY_KIND[kind.ordinal()] = names;
            }
        }
    }

    /** Each endpoint map the trees (and the sticky ports' checks) may have, to its kind's {@link Kind#endpointsBase}. */
    private static final Map<String, String> ENDPOINT_MAP_BASES = endpointMapBases();

    private static Map<String, String> endpointMapBases() {
        Map<String, String> out = new HashMap<>();
        List<Integer> blocks = new ArrayList<>();
        for (int block = 1; block < BLOCKS; block++) {
            blocks.add(block);
        }
        for (Kind kind : Kind.values()) {
            kind.endpointMaps(blocks).forEach(m -> out.put(m, kind.endpointsBase()));
            // The sticky ports' maps from "frontend . number" to endpoint, laid out as these:
            // a connection sent to a remembered endpoint counts there.
            for (int hi : StickyPick.allRanges()) {
                out.put(StickyPick.endpoints(kind, hi), kind.endpointsBase());
            }
        }
        return Map.copyOf(out);
    }

    /** Every endpoint map the trees may have, blocks included: the sets a counter scrape reads. */
    static Set<String> allEndpointMaps() {
        return ENDPOINT_MAP_BASES.keySet();
    }

    /** Each endpoint map the trees may have, to the tree it belongs to. */
    private static final Map<String, String> IN_USE = inUseOfMaps();

    private static Map<String, String> inUseOfMaps() {
        Map<String, String> out = new HashMap<>();
        for (Kind kind : Kind.values()) {
            ENDPOINT_MAP_BASES.forEach((map, base) -> {
                if (base.equals(kind.endpointsBase())) {
                    out.put(map, kind.inUse());
                }
            });
        }
        return Map.copyOf(out);
    }

    /** The tree ({@link Kind#inUse}) a fragment with elements in {@code set} picks through, or null. */
    static String inUseOf(String set) {
        String tree = IN_USE.get(set);
        if (tree == null) {
            Kind big = bigBlockKind(set);
            return big == null ? null : big.inUse();
        }
        return tree;
    }

    /** The base name ({@link Kind#endpointsBase}) of a tree's endpoint map, or null for another set. */
    static String endpointsBaseOf(String set) {
        String base = ENDPOINT_MAP_BASES.get(set);
        if (base == null) {
            Kind big = bigBlockKind(set);
            return big == null ? null : big.endpointsBase();
        }
        return base;
    }

    /**
     * The tree of a block past the root's ({@code service-endpoints-1025-1152} …, up to
     * MAX_TREE_PICK) whose endpoint map {@code set} is, or null for any other set: such names are
     * read rather than listed, there being 1,008 of them. Allocates nothing (asked of every set
     * name of every fragment a sync sends).
     */
    static Kind bigBlockKind(String set) {
        for (Kind kind : BIG_BLOCK_KINDS) {
            if (bigBlock(kind, set) > 0) {
                return kind;
            }
        }
        return null;
    }

    /** The trees whose counts may go past MAX_PLAIN_PICK (a port with this node's endpoints past it has chains of its own). */
    private static final List<Kind> BIG_BLOCK_KINDS = List.of(Kind.IP, Kind.NODEPORT);

    /** The block (BLOCKS to TREE_BLOCKS − 1) of {@code kind} whose endpoint map is named {@code set}, or -1. */
    static int bigBlock(Kind kind, String set) {
        return blockNamed(kind.endpointsBase(), set);
    }

    /**
     * The block (BLOCKS to TREE_BLOCKS − 1) whose tree of {@code kind} has {@code chain} for its
     * root (where a verdict element sends a count past the root's blocks), or -1.
     */
    static int bigBlockOfRoot(Kind kind, String chain) {
        return blockNamed(kind.prefix + "-pick", chain);
    }

    /** "BASE-LO-HI" for a block past the root's: the block, else -1. Allocates nothing. */
    private static int blockNamed(String base, String set) {
        int n = set.length();
        if (n < base.length() + 4 || !set.startsWith(base) || set.charAt(base.length()) != '-') {
            return -1;
        }
        long lo = 0;
        long hi = 0;
        int i = base.length() + 1;
        int start = i;
        for (; i < n && set.charAt(i) != '-'; i++) {
            char c = set.charAt(i);
            if (c < '0' || c > '9' || i - start > 6) {
                return -1;
            }
            lo = lo * 10 + (c - '0');
        }
        if (i == start || i >= n - 1) {
            return -1;
        }
        start = ++i;
        for (; i < n; i++) {
            char c = set.charAt(i);
            if (c < '0' || c > '9' || i - start > 6) {
                return -1;
            }
            hi = hi * 10 + (c - '0');
        }
        if ((lo - 1) % MAX_SHARED_PICK != 0 || hi != lo + MAX_SHARED_PICK - 1) {
            return -1;
        }
        long block = (lo - 1) / MAX_SHARED_PICK;
        return block >= BLOCKS && block < TREE_BLOCKS ? (int) block : -1;
    }

    /**
     * The endpoint maps of every block past the root's, of the trees that have them: the rest of
     * the sets the endpoint counters read ({@link #allEndpointMaps} holds the others). Made when
     * asked (with --endpoint-counters, once).
     */
    static List<String> bigBlockMaps() {
        List<String> out = new ArrayList<>();
        for (Kind kind : BIG_BLOCK_KINDS) {
            for (int block = BLOCKS; block < TREE_BLOCKS; block++) {
                out.add(kind.endpoints(block * MAX_SHARED_PICK + 1));
            }
        }
        return out;
    }

    private final Kind kind;
    /** Whether some port of this kind has ClientIP affinity: the root sends such ports to {@link StickyPick}'s check first. */
    private final boolean sticky;
    /** The blocks above the first that ports' counts are in ({@link Kind#blockSet}), ascending. */
    private final List<Integer> blocks;
    /**
     * The buckets of counts up to MAX_SHARED_PICK that some port's count is in ({@link #bucket},
     * by their highest count), ascending: their maps and the chains leading to their leaves are
     * declared, the rest of the tree is not.
     */
    private final List<Integer> buckets;

    /**
     * @param demanded the on-demand sets the services fill, of every kind (the others' are ignored)
     */
    PickTree(FragmentBuilder b, Kind kind, boolean sticky, Set<String> demanded) {
        super(b);
        this.kind = kind;
        this.sticky = sticky;
        Shape shape = Shape.of(kind, demanded);
        this.blocks = shape.blocks();
        this.buckets = shape.buckets();
    }

    /**
     * The blocks above the first whose set or map {@code demanded} names, ascending: a block's
     * map alone is demanded by elements a change keeps for packets crossing its commit
     * ({@link Transitions}), which the old generation's tree of that block leads to.
     */
    private static void blocksInUse(Kind kind, Set<String> demanded, List<Integer> out) {
        for (int block = 1; block < BLOCKS; block++) {
            if (demanded.contains(kind.blockSet(block)) || demanded.contains(kind.endpoints(block * MAX_SHARED_PICK + 1))) {
                out.add(block);
            }
        }
        // Past the root's blocks, a block's map is all there is (its ports are in no block set).
        if (BIG_BLOCK_KINDS.contains(kind)) {
            int from = out.size();
            for (String set : demanded) {
                int block = bigBlock(kind, set);
                if (block > 0) {
                    out.add(block);
                }
            }
            out.subList(from, out.size()).sort(null);
        }
    }

    /** The buckets up to MAX_SHARED_PICK whose endpoint map {@code demanded} names, ascending. */
    private static void bucketsInUse(Kind kind, Set<String> demanded, List<Integer> out) {
        for (int hi : sharedBuckets()) {
            if (demanded.contains(kind.endpoints(hi))) {
                out.add(hi);
            }
        }
    }

    /**
     * Per block set and block map of every tree, the tree's smallest bucket's map: what a
     * fragment with elements in a block demands besides (see {@link #alsoDemanded}).
     */
    private static final Map<String, String> SMALLEST_BUCKET_OF_BLOCK = smallestBucketOfBlock();

    private static Map<String, String> smallestBucketOfBlock() {
        Map<String, String> out = new HashMap<>();
        for (Kind kind : Kind.values()) {
            for (int block = 1; block < BLOCKS; block++) {
                out.put(kind.blockSet(block), kind.endpoints(1));
                out.put(kind.endpoints(block * MAX_SHARED_PICK + 1), kind.endpoints(1));
            }
        }
        return Map.copyOf(out);
    }

    /**
     * What a fragment with elements in {@code set} demands of the globals besides the set and its
     * tree, or null: a block's set or map demands its tree's smallest bucket (1-8), so that a
     * tree of blocks alone still has a last level for a packet its root finds in no block set;
     * else a packet that reads its block set after a commit moving its count out of the block
     * falls off the root and picks nothing ({@link Transitions}).
     */
    static String alsoDemanded(String set) {
        String smallest = SMALLEST_BUCKET_OF_BLOCK.get(set);
        if (smallest == null) {
            // A block past the root's too: a packet that misses the verdict map after the flip
            // goes on to the root (the count left the verdict map's blocks).
            Kind big = bigBlockKind(set);
            return big == null ? null : big.endpoints(1);
        }
        return smallest;
    }

    /**
     * The count whose last level a connection's first packet reaches through the tree of {@code
     * kind} declared for {@code demanded} (as {@link #declare} writes it), reading its frontend's
     * block and bit sets in the tree's order, when the first {@code flip} of those reads see
     * k − 1 = {@code before} and the rest k − 1 = {@code after}: a commit that flips the
     * generation between two of them ({@link Transitions}). {@code flip} 0 reads every set after.
     */
    static int reached(Kind kind, Set<String> demanded, int before, int after, int flip) {
        return Shape.of(kind, demanded).reached(before, after, flip);
    }

    /** A tree as {@link #declare} writes it: the buckets and blocks in use, ascending. */
    record Shape(List<Integer> buckets, List<Integer> blocks) {
        static Shape of(Kind kind, Set<String> demanded) {
            List<Integer> blocks = new ArrayList<>();
            List<Integer> buckets = new ArrayList<>();
            blocksInUse(kind, demanded, blocks);
            bucketsInUse(kind, demanded, buckets);
            return new Shape(buckets, blocks);
        }

        /** See {@link PickTree#reached}. */
        int reached(int before, int after, int flip) {
            return (int) reachedAndReads(before, after, flip);
        }

        /**
         * {@link #reached} in the low 32 bits, and in the high 32 how many sets the walk read: a
         * flip after all of them is a walk of the old count alone, as is every later one.
         */
        long reachedAndReads(int before, int after, int flip) {
            int reads = 0;
            if (before >= MAX_PLAIN_PICK || after >= MAX_PLAIN_PICK) {
                // services' verdict map first: a count past the root's blocks goes to its block's tree.
                int km1 = reads++ < flip ? before : after;
                if (km1 >= MAX_PLAIN_PICK) {
                    int block = km1 / MAX_SHARED_PICK;
                    if (!blocks.contains(block)) {
                        // The new count's block, which the old generation does not have: its tree
                        // is committed before the element leading to it (Syncer#structureFirst),
                        // and every read from here is after the flip: the new count itself.
                        return (long) reads << 32 | (after + 1);
                    }
                    return walk(buckets, blocks, block * MAX_SHARED_PICK + 1, (block + 1) * MAX_SHARED_PICK, before, after,
                            flip, reads);
                }
            }
            for (int block : blocks) {
                if (block >= BLOCKS) {
                    break; // the verdict maps' (above): the root asks for none of them
                }
                int km1 = reads++ < flip ? before : after;
                if (km1 / MAX_SHARED_PICK == block) {
                    return walk(buckets, blocks, block * MAX_SHARED_PICK + 1, (block + 1) * MAX_SHARED_PICK, before, after,
                            flip, reads);
                }
            }
            int[] e = narrow(buckets, blocks, 1, MAX_SHARED_PICK);
            return walk(buckets, blocks, e[0], e[1], before, after, flip, reads);
        }
    }

    /**
     * The rest of {@link Shape#reachedAndReads} from the chain choosing among lo..hi, {@code
     * reads} sets read so far.
     */
    private static long walk(List<Integer> buckets, List<Integer> blocks, int lo, int hi, int before, int after,
                             int flip, int reads) {
        while (true) {
            int half = (hi - lo + 1) / 2;
            int bit = Integer.numberOfTrailingZeros(half);
            boolean set = ((reads++ < flip ? before : after) & 1 << bit) != 0;
            if (half == 1) {
                return (long) reads << 32 | (set ? hi : lo);
            }
            int[] e = set ? narrow(buckets, blocks, lo + half, hi) : narrow(buckets, blocks, lo, lo + half - 1);
            lo = e[0];
            hi = e[1];
        }
    }

    /**
     * The endpoint maps of the trees, blocks included (not the sticky ports' maps by number):
     * each is declared while some frontend's count is in its bucket, and with it the part of the
     * tree that leads to its leaves.
     */
    private static final Map<String, Kind> TREE_MAPS = treeMaps();

    private static Map<String, Kind> treeMaps() {
        List<Integer> blocks = new ArrayList<>();
        for (int block = 1; block < BLOCKS; block++) {
            blocks.add(block);
        }
        Map<String, Kind> out = new HashMap<>();
        for (Kind kind : Kind.values()) {
            kind.endpointMaps(blocks).forEach(m -> out.put(m, kind));
        }
        return Map.copyOf(out);
    }

    /** The tree whose leaves look {@code set} up ("frontend . index" to endpoint), or null for another set. */
    static Kind treeOfMap(String set) {
        Kind kind = TREE_MAPS.get(set);
        return kind != null ? kind : bigBlockKind(set);
    }

    /** The on-demand sets' names start with one of these: the trees' count blocks, and the sticky ports' ranges. */
    private static final List<String> ON_DEMAND_PREFIXES = Arrays.stream(Kind.values())
            .flatMap(k -> Stream.of(k.prefix + "-count-block-", StickyPick.rangeMembersPrefix(k))).toList();

    /**
     * Whether a set is declared only while some port fills it: a tree's endpoint map of a bucket
     * of counts ({@link Kind#endpoints}), a block set of a tree ({@link Kind#blockSet}) or a range
     * set of the sticky ports ({@link StickyPick#rangeMembers}). Asked
     * of every set name of every fragment a sync sends or records (two million at 100k
     * services), so it allocates nothing.
     */
    static boolean isOnDemandSet(String name) {
        if (TREE_MAPS.containsKey(name) || bigBlockKind(name) != null) {
            return true;
        }
        if (!name.contains("-block-") && !name.contains("-ids-")) {
            return false;
        }
        for (String prefix : ON_DEMAND_PREFIXES) {
            if (name.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The bit sets, the root, and per bucket of counts in use its endpoint map and the chains
     * that lead to its leaves ({@code KIND-pick-1-8} and below for most services); per block in
     * use its map, set and whole tree.
     */
    void declare() {
        for (int hi : buckets) {
            b.set(endpointMap(kind.endpoints(hi)));
        }
        for (int block : blocks) {
            b.set(endpointMap(kind.endpoints(block * MAX_SHARED_PICK + 1)));
        }
        for (int bit = 0; bit < BITS; bit++) {
            b.set(kindSet(kind.bitSet(bit)).withComment(
                    kind.counted() + " endpoint count minus one has bit " + bit + " set"));
        }
        // The root first sends a port with ClientIP affinity through the check of the endpoints
        // its clients are remembered by (StickyPick), which DNATs a client it finds and returns
        // otherwise; then a port counted in a block to that block's tree: one lookup per block in
        // use, none in a cluster without large services. The check hangs from the root, not from
        // the leaves: the same one lookup, seven levels nearer the base chain (JumpDepthKernelTest).
        List<Rule> toBlocks = new ArrayList<>();
        if (sticky) {
            toBlocks.add(b.rule(kind.root(), concat(concat(key(), RuleParts.lookup(StickyPick.allMembers(kind))),
                    verdict(Verdict.jump(StickyPick.check(kind))))));
        }
        for (int block : blocks) {
            if (block >= BLOCKS) {
                break; // services' verdict maps send on to these: no set, no rule here
            }
            int lo = block * MAX_SHARED_PICK + 1;
            b.set(kindSet(kind.blockSet(block)).withComment(kind.counted() + " endpoint count is "
                    + lo + " to " + (lo + MAX_SHARED_PICK - 1)));
            toBlocks.add(b.rule(kind.root(), concat(concat(key(), RuleParts.lookup(kind.blockSet(block))),
                    verdict(Verdict.goTo(kind.chain(lo, lo + MAX_SHARED_PICK - 1))))));
        }
        chains(1, MAX_SHARED_PICK, kind.root(), toBlocks);
        for (int block : blocks) {
            int lo = block * MAX_SHARED_PICK + 1;
            chains(lo, lo + MAX_SHARED_PICK - 1, kind.chain(lo, lo + MAX_SHARED_PICK - 1), List.of());
        }
    }

    /** A map from "frontend . index" to "endpoint address . port" for a bucket of counts. */
    private NftSet endpointMap(String name) {
        DataType a = b.addr();
        List<DataType> key = kind.ip ? List.of(a, DataType.INET_PROTO, DataType.INET_SERVICE, DataType.MARK)
                : List.of(DataType.INET_PROTO, DataType.INET_SERVICE, DataType.MARK);
        String frontend = (kind.local ? "policy Local " : kind.ip ? "service " : "") + (kind.ip ? "IP port" : "NodePort");
        String counts = name.substring(kind.endpointsBase().length() + 1);
        return new NftSet(nf, t, name, key, DataType.concat(List.of(a, DataType.INET_SERVICE)), 0, 0,
                frontend + " . index to " + (kind.local ? "this node's " : "") + "endpoint address . port, for "
                        + counts + " endpoints");
    }

    private NftSet kindSet(String name) {
        return kind.ip ? NftSet.set(nf, t, name, b.addr(), DataType.INET_PROTO, DataType.INET_SERVICE)
                : NftSet.set(nf, t, name, DataType.INET_PROTO, DataType.INET_SERVICE);
    }

    /**
     * The chain {@code name} choosing among counts lo..hi (a power of two of them, lo − 1 a
     * multiple of it), after {@code first}, and the chains below it. A half no port's count is in
     * has no chain, and a chain whose other half is the only one in use is not written either: its
     * bit test could not fail, so its parent goes straight to the half in use ({@link #entry}),
     * one chain and one jump fewer on every path through it.
     */
    private void chains(int lo, int hi, String name, List<Rule> first) {
        List<Rule> rules = new ArrayList<>(first);
        int half = (hi - lo + 1) / 2;
        if (half == 1) {
            // The last level draws itself, among hi endpoints when bit 0 of k - 1 is set, else
            // among lo: "destination . numgen random mod k" in the endpoint map. (A chain per
            // count below these was 128 more chains a tree, for the same lookups.)
            rules.add(b.rule(name, concat(concat(key(), RuleParts.lookup(kind.bitSet(0))),
                    p.pickEndpoint(key(), kind.endpoints(hi), hi))));
            rules.add(b.rule(name, p.pickEndpoint(key(), kind.endpoints(lo), lo)));
            b.chain(Chain.regular(nf, t, name), rules);
            return;
        }
        int bit = Integer.numberOfTrailingZeros(half);
        boolean upper = inUse(lo + half, hi);
        boolean lower = inUse(lo, lo + half - 1);
        if (upper && lower) {
            rules.add(b.rule(name, concat(concat(key(), RuleParts.lookup(kind.bitSet(bit))),
                    verdict(Verdict.goTo(entry(lo + half, hi))))));
            rules.add(b.rule(name, List.of(verdict(Verdict.goTo(entry(lo, lo + half - 1))))));
        } else if (upper || lower) {
            // Only the root gets here (below it, a chain is written only with both halves in use).
            rules.add(b.rule(name, List.of(verdict(Verdict.goTo(upper ? entry(lo + half, hi) : entry(lo, lo + half - 1))))));
        }
        b.chain(Chain.regular(nf, t, name), rules);
        if (upper) {
            int[] e = narrow(lo + half, hi);
            chains(e[0], e[1], kind.chain(e[0], e[1]), List.of());
        }
        if (lower) {
            int[] e = narrow(lo, lo + half - 1);
            chains(e[0], e[1], kind.chain(e[0], e[1]), List.of());
        }
    }

    /** The chain that decides among the counts in use of lo..hi (in use): see {@link #narrow}. */
    private String entry(int lo, int hi) {
        int[] e = narrow(lo, hi);
        return kind.chain(e[0], e[1]);
    }

    /**
     * lo..hi narrowed while only one of its halves is in use, down to a range whose halves are
     * both in use or to a last level: the counts its chain must tell apart.
     */
    private int[] narrow(int lo, int hi) {
        return narrow(buckets, blocks, lo, hi);
    }

    private static int[] narrow(List<Integer> buckets, List<Integer> blocks, int lo, int hi) {
        while (hi - lo + 1 > 2) {
            int half = (hi - lo + 1) / 2;
            boolean upper = inUse(buckets, blocks, lo + half, hi);
            boolean lower = inUse(buckets, blocks, lo, lo + half - 1);
            if (upper && lower) {
                break;
            }
            if (upper) {
                lo += half;
            } else {
                hi = lo + half - 1;
            }
        }
        return new int[] {lo, hi};
    }

    /**
     * Whether some port's count is in lo..hi: a block's counts (its tree is declared whole with
     * its set), or a bucket in use that overlaps them. Buckets are subtrees (1-8, then 9-16 …
     * 65-128, the upper halves), so a bucket overlapping a chain's counts holds them or lies under it.
     */
    private boolean inUse(int lo, int hi) {
        return inUse(buckets, blocks, lo, hi);
    }

    private static boolean inUse(List<Integer> buckets, List<Integer> blocks, int lo, int hi) {
        if (lo > MAX_SHARED_PICK) {
            return blocks.contains((lo - 1) / MAX_SHARED_PICK);
        }
        for (int bucketHi : buckets) {
            if (bucketLow(bucketHi) <= hi && lo <= bucketHi) {
                return true;
            }
        }
        return false;
    }

    private List<Expr> key() {
        return kind.ip ? p.daddrProtoPort() : p.protoPort();
    }

    /**
     * A port with {@code k} endpoints (1..MAX_TREE_PICK): its key in the bit sets of (k − 1)'s
     * low bits, and in its block's set when k − 1 ≥ MAX_SHARED_PICK, up to MAX_PLAIN_PICK (past
     * that, {@code services}' verdict map sends it to its block: {@link Kind#blockRoot}).
     */
    static void count(FragmentBuilder b, Kind kind, Bytes key, int k) {
        if (k < 1 || k > MAX_TREE_PICK || k > MAX_PLAIN_PICK && !BIG_BLOCK_KINDS.contains(kind)) {
            throw new IllegalArgumentException("no shared pick chain for " + k + " endpoints");
        }
        for (int bit = 0; bit < BITS; bit++) {
            if ((k - 1 & 1 << bit) != 0) {
                b.element(kind.bitSet(bit), SetElement.of(key));
            }
        }
        int block = (k - 1) / MAX_SHARED_PICK;
        if (block > 0 && block < BLOCKS) {
            b.element(kind.blockSet(block), SetElement.of(key));
        }
    }

    /** The block of a count past MAX_PLAIN_PICK: its tree's root ({@link Kind#blockRoot}). */
    static int blockOf(int k) {
        return (k - 1) / MAX_SHARED_PICK;
    }
}
