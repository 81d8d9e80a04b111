package io.nftproxy.proxy.render;

import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.PackedElements;
import io.nftproxy.netlink.nft.SetElement;

/**
 * What a connection's first packet may look up while it crosses the commit that takes one service
 * port from its old fragment to its new one, and the new one lacks: elements a sync leaves in the
 * kernel for {@link #GRACE} after such a commit, then takes away.
 *
 * <p>Why a packet can meet an index neither generation holds: {@code nft_do_chain} reads the
 * generation bit once and walks that generation's rules to the end, but every set lookup asks for
 * the elements active in the generation current at that moment ({@code nft_genmask_cur} in the
 * set backends). A commit that flips the generation while a packet is in a pick tree leaves it
 * with the high bits of the old count and the low bits of the new one (the tree reads k − 1 from
 * the highest bit down, one bit set per level, see {@link PickTree}), and its last level draws an
 * index below that count and looks it up after the flip. From 5 endpoints to 4 (k − 1 from 100
 * to 011), a packet that read bit 2 before the flip and bits 1 and 0 after counts 8 and may draw
 * index 7; one that read every bit before draws up to index 4, which the new generation no longer
 * has; from 8 to 9 (0111 to 1000), a packet that read bit 3 before the flip looks its index up
 * in the map of counts 1-8, which the port has just left. Without these elements such a packet
 * finds no endpoint and the connection is refused (CountChangesUnderLoadKernelTest: 5 of 6,012
 * connections across 3,316 changes of the count).
 *
 * <p>What stays, then, for {@link #GRACE}: every element of the old fragment in a tree's endpoint
 * map that the new one does not hold, with its old endpoint; and, for each frontend whose count
 * changes, "frontend . index" for every index below each count a packet can reach through the
 * old generation's tree ({@link PickTree#reached}: its reads of the block and bit sets answering
 * for the old count up to the flip and for the new one after it, wherever the flip falls) that
 * neither generation holds, mapped to an endpoint of the new set (of the old one when none is
 * left). A packet crossing the commit is then sent to an endpoint of the old or the new set, as
 * a packet crossing kube-proxy's iptables-restore (which swaps whole chains) is, never nowhere.
 * Only a packet that crosses a commit can reach them: the new generation's bits lead to the new
 * count, below which the new generation holds every index. The sync keeps them as a contributor
 * of their own per change, which a port's own elements override (a later change's override an
 * earlier one's), and takes them away in a sync without changes when their time is past
 * ({@code SyncLoop} asks for it).
 *
 * <p>A ClusterIP port or NodePort that the new generation sends on no more (its port goes, or is
 * left without endpoints, and no other port of the sync takes the frontend over) keeps nothing. A
 * packet crossing that commit either reaches an old endpoint or misses its map after the flip: it
 * then leaves the tree without a DNAT, still addressed to the frontend, and the filter chains it
 * meets next run in the new generation ({@code cluster-ips-check} after the output DNAT, the checks
 * of the forward and input hooks): they answer as for a frontend without endpoints (REJECT, or DROP
 * under policy Local) or without a service, which is what a packet after the commit gets. (Not an
 * external or load-balancer IP: the node's own connections to one are checked before the DNAT
 * only; nor a frontend moving to chains of its own: see {@link #answeredAfter}.) Keeping
 * the old elements for it cost a service's removal half its time again at 100,000 services.
 * Unless an earlier change, within its {@link #GRACE}, keeps an element such a packet can look up
 * after the flip: it would send the packet to an endpoint of an earlier state, so the port's old
 * elements are kept over it, as for any other change.
 * A frontend that leaves one tree but stays in another (policy Local given up: the local tree
 * loses it, the cluster tree keeps it) keeps its elements: there the new generation would
 * DNAT it, and a packet left un-NATed would be an answer of neither.
 */
public final class Transitions {
    /**
     * How long they stay: a packet is in {@code nft_do_chain} for microseconds, under RCU, and the
     * commit's own clean-up waits for such readers; seconds leave room for a loaded node.
     */
    public static final Duration GRACE = Duration.ofSeconds(2);

    private Transitions() {
    }

    /**
     * The elements to keep across the commit from {@code old} to {@code neu} (null: the port
     * goes), as a fragment of elements only: {@link Fragment#EMPTY} when the change needs none.
     * {@code declared}: the on-demand sets the old generation declares (its trees' shape).
     */
    public static Fragment between(Fragment old, Fragment neu, Set<String> declared) {
        return between(old, neu, declared, Elsewhere.NONE, NOTHING_KEPT, true);
    }

    /** The elements of both (a key in both: {@code a}'s), as one fragment of elements only. */
    public static Fragment merged(Fragment a, Fragment b) {
        if (b == Fragment.EMPTY) {
            return a;
        }
        if (a == Fragment.EMPTY) {
            return b;
        }
        Map<String, Map<Bytes, SetElement>> out = new LinkedHashMap<>();
        for (Fragment f : List.of(a, b)) {
            f.elements().forEach((set, els) -> {
                Map<Bytes, SetElement> m = out.computeIfAbsent(set, k -> new LinkedHashMap<>());
                els.forEach(e -> m.putIfAbsent(e.key(), e));
            });
        }
        return fragment(out);
    }

    /** Which elements earlier changes keep, by set and key: what {@link #between} must not leave a crossing packet. */
    public interface Kept {
        boolean holds(String set, Bytes key);
    }

    /** No earlier change keeps anything. */
    public static final Kept NOTHING_KEPT = (set, key) -> false;

    /**
     * {@link #between}, where a frontend the port lets go may be another port's in the same sync
     * ({@code elsewhere}: a Service's port renamed, a ClusterIP or NodePort given to another
     * Service): its new count and endpoints are that port's; {@code kept}: what earlier changes
     * keep, still in place.
     * {@code structureStays}: whether every on-demand set of the old fragment
     * (its buckets' maps, its blocks: the part of a tree it picks through) is still declared after
     * the commit. When the commit takes that part away, every frontend keeps its elements, which
     * keep it declared until they go: measured with real packets, a commit that deleted the chains
     * and sets a crossing packet was walking lost its SYN now and then (TCP sent it again a second
     * later), where one that left them for the sync after lost none.
     */
    public static Fragment between(Fragment old, Fragment neu, Set<String> declared, Elsewhere elsewhere, Kept kept,
                                   boolean structureStays) {
        Fragment next = neu == null ? Fragment.EMPTY : neu;
        Map<String, Map<Bytes, SetElement>> out = new LinkedHashMap<>();
        slotsLeft(old, next, elsewhere, out);
        if (sameTreeMaps(old, next)) {
            // the same counts and indices (a node's change re-renders every port)
            return out.isEmpty() ? Fragment.EMPTY : fragment(out);
        }
        Map<PickTree.Kind, Map<Bytes, Run>> olds = runs(old);
        Map<PickTree.Kind, Map<Bytes, Run>> news = runs(next);
        for (Map.Entry<PickTree.Kind, Map<Bytes, Run>> tree : olds.entrySet()) {
            PickTree.Kind kind = tree.getKey();
            Map<Bytes, Run> after = news.getOrDefault(kind, Map.of());
            PickTree.Shape shape = null;
            for (Map.Entry<Bytes, Run> f : tree.getValue().entrySet()) {
                Bytes front = f.getKey();
                Run was = f.getValue();
                Run now = after.containsKey(front) ? after.get(front) : elsewhere.run(kind, front);
                int a = was.count();
                int b = now == null ? 0 : now.count();
                if (a == b) {
                    continue; // the same bits and indices: whatever the flip, one of the two counts
                }
                shape = shape != null ? shape : PickTree.Shape.of(kind, declared);
                if (b == 0 && structureStays && answeredAfter(kind, front, old, next, elsewhere)
                        && !keptBelow(kind, shape, front, a, kept)) {
                    continue; // answered as after the commit: see the class's comment
                }
                // The old indices the new generation no longer maps, as they were: all of them when
                // the count left its bucket's map, else those from the new count up.
                String oldMap = kind.endpoints(a);
                boolean sameMap = b > 0 && kind.endpoints(b).equals(oldMap);
                for (int i = sameMap ? b : 0; i < a; i++) {
                    SetElement el = was.element(i);
                    out.computeIfAbsent(oldMap, k -> new LinkedHashMap<>()).put(el.key(), el);
                }
                // The indices below each count a crossing packet reaches that neither holds.
                Run to = b > 0 ? now : was;
                for (int c : reachable(shape, a, b)) {
                    String map = kind.endpoints(c);
                    int held = Math.max(b > 0 && kind.endpoints(b).equals(map) ? b : 0, map.equals(oldMap) ? a : 0);
                    for (int i = held; i < c; i++) {
                        Bytes key = Bytes.concat(front, Bytes.host32(i));
                        out.computeIfAbsent(map, k -> new LinkedHashMap<>()).putIfAbsent(key,
                                SetElement.of(key, to.element(i % to.count()).data()));
                    }
                }
            }
        }
        return out.isEmpty() ? Fragment.EMPTY : fragment(out);
    }

    /**
     * A hashed frontend ({@link MaglevPick}) still sent on, whose table the new generation holds
     * in another size's map (its count left its bucket) or in none (it picks at random now, or
     * another port took it over): its old slots, kept as they were. A packet that read the old
     * verdict walks the old size's chain and looks its slot up after the flip. Within a size every
     * slot is in both generations, each with the endpoint of one of them.
     */
    private static void slotsLeft(Fragment old, Fragment next, Elsewhere elsewhere, Map<String, Map<Bytes, SetElement>> out) {
        Set<Bytes> stillSent = null;
        for (Map.Entry<String, List<SetElement>> e : old.elements().entrySet()) {
            if (!MaglevPick.isSlotsMap(e.getKey()) || next.elements().containsKey(e.getKey())) {
                continue; // not a table, or the same size's: every slot in both
            }
            if (stillSent == null) {
                // Every frontend services sends on is in one of these (FragmentBuilder#dispatched).
                stillSent = new HashSet<>();
                for (String set : List.of(TableNames.SERVICE_IPS, TableNames.SERVICE_NODEPORTS)) {
                    for (SetElement el : next.elements().getOrDefault(set, List.of())) {
                        stillSent.add(el.key());
                    }
                }
            }
            for (SetElement el : e.getValue()) {
                Bytes front = frontOfSlot(el.key());
                if (stillSent.contains(front) || elsewhere.sentOn(front)) {
                    out.computeIfAbsent(e.getKey(), k -> new LinkedHashMap<>()).put(el.key(), el);
                }
            }
        }
    }

    /** The frontend of a slot's key, "frontend . slot". */
    private static Bytes frontOfSlot(Bytes key) {
        return key.slice(0, key.length() - 4);
    }

    private static Fragment fragment(Map<String, Map<Bytes, SetElement>> out) {
        Map<String, List<SetElement>> elements = new LinkedHashMap<>();
        out.forEach((set, els) -> elements.put(set, List.copyOf(els.values())));
        return new Fragment(Map.of(), Map.of(), elements, Set.of(), EndpointSlots.NONE);
    }

    /**
     * Whether an earlier change keeps an element a packet crossing the commit that takes {@code
     * front}'s count from {@code a} to nothing can look up: it would map the frontend to an
     * endpoint of an earlier state, so this change keeps its own over it.
     */
    private static boolean keptBelow(PickTree.Kind kind, PickTree.Shape shape, Bytes front, int a, Kept kept) {
        if (kept == NOTHING_KEPT) {
            return false;
        }
        for (int c : reachable(shape, a, 0)) {
            String map = kind.endpoints(c);
            for (int i = 0; i < c; i++) {
                if (kept.holds(map, Bytes.concat(front, Bytes.host32(i)))) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Whether a packet that leaves {@code kind}'s tree un-NATed while it crosses the commit meets
     * what a packet after it meets. Not when the new generation still sends the frontend on (a
     * tree, policy Local, chains of their own: {@code services} sends on what {@code service-ips}
     * and {@code service-nodeports} hold, in this port's new fragment or, handed over, another's),
     * nor for an external or load-balancer IP: the node's own connection to one passes its
     * endpoint check ({@code filter-output}) before the DNAT and nothing after it asks again, so
     * an un-NATed one would leave the node. A ClusterIP is checked after the output DNAT ({@code
     * cluster-ips-check}), a NodePort in {@code filter-input}, forwarded traffic in {@code
     * filter-forward}.
     */
    private static boolean answeredAfter(PickTree.Kind kind, Bytes front, Fragment old, Fragment next, Elsewhere elsewhere) {
        // A frontend in a tree is among them too (FragmentBuilder#dispatched).
        if (sentOn(next, front) || elsewhere.sentOn(front)) {
            return false;
        }
        return !kind.ip || holds(old, TableNames.CLUSTER_IP_PORTS, front);
    }

    /** Whether {@code f} puts {@code front} among the frontends {@code services} sends on. */
    private static boolean sentOn(Fragment f, Bytes front) {
        return holds(f, TableNames.SERVICE_IPS, front) || holds(f, TableNames.SERVICE_NODEPORTS, front);
    }

    private static boolean holds(Fragment f, String set, Bytes key) {
        for (SetElement e : f.elements().getOrDefault(set, List.of())) {
            if (e.key().equals(key)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The counts whose last level a packet can reach through the old generation's tree of {@code
     * kind} while its frontend's count goes from {@code a} to {@code b} (0: it picks no more),
     * whichever of its reads the commit's flip falls between; a and b among them when reachable.
     */
    static Set<Integer> reachable(PickTree.Kind kind, Set<String> declared, int a, int b) {
        return reachable(PickTree.Shape.of(kind, declared), a, b);
    }

    private static Set<Integer> reachable(PickTree.Shape shape, int a, int b) {
        Set<Integer> out = new TreeSet<>();
        int before = a - 1;
        int after = b > 0 ? b - 1 : 0;
        for (int flip = 0; ; flip++) {
            long reached = shape.reachedAndReads(before, after, flip);
            out.add((int) reached);
            if (flip >= (int) (reached >>> 32)) {
                return out; // after every read: the old count's own walk, and so every later flip
            }
        }
    }

    /**
     * The new fragments of the other ports of a sync, indexed by tree and frontend only when a
     * port lets a frontend go (rare: most syncs never build it).
     */
    public static final class Elsewhere {
        static final Elsewhere NONE = new Elsewhere(List::of);

        private final Supplier<List<Fragment>> fragments;
        private Map<PickTree.Kind, Map<Bytes, Run>> index;
        private Set<Bytes> sentOn;

        private Elsewhere(Supplier<List<Fragment>> fragments) {
            this.fragments = fragments;
        }

        Run run(PickTree.Kind kind, Bytes front) {
            if (index == null) {
                index = new EnumMap<>(PickTree.Kind.class);
                for (Fragment f : fragments.get()) {
                    runs(f).forEach((k, fronts) -> index.computeIfAbsent(k, x -> new HashMap<>()).putAll(fronts));
                }
            }
            return index.getOrDefault(kind, Map.of()).get(front);
        }

        /** Whether one of the other ports' new fragments puts {@code front} among those {@code services} sends on. */
        boolean sentOn(Bytes front) {
            if (sentOn == null) {
                sentOn = new HashSet<>();
                for (Fragment f : fragments.get()) {
                    for (String set : List.of(TableNames.SERVICE_IPS, TableNames.SERVICE_NODEPORTS)) {
                        f.elements().getOrDefault(set, List.of()).forEach(e -> sentOn.add(e.key()));
                    }
                }
            }
            return sentOn.contains(front);
        }
    }

    /** The new fragments of a sync's changes, to look a frontend up in when its port lets it go. */
    public static Elsewhere elsewhere(Supplier<List<Fragment>> newFragments) {
        return new Elsewhere(newFragments);
    }

    /** Whether both fragments hold the same elements in the trees' endpoint maps (compared packed, as bytes). */
    private static boolean sameTreeMaps(Fragment a, Fragment b) {
        for (Fragment[] pair : new Fragment[][] {{a, b}, {b, a}}) {
            for (Map.Entry<String, List<SetElement>> e : pair[0].elements().entrySet()) {
                if (PickTree.treeOfMap(e.getKey()) != null && !e.getValue().equals(pair[1].elements().get(e.getKey()))) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * One frontend's elements in a tree's endpoint map, read in place from the packed list: the
     * renderer writes a frontend's indices together and in order ({@code ServiceData#endpoints}),
     * so element i is at {@code start + i}; a list that is not so is searched.
     */
    private record Run(Bytes front, PackedElements list, int start, int count, boolean ordered) {
        SetElement element(int index) {
            if (ordered) {
                return list.get(start + index);
            }
            for (int j = 0; j < list.size(); j++) {
                int o = list.offset(j);
                if (indexOf(list.bytes(), o) == index && (list.bytes()[o + 1] & 0xff) == front.length() + 4
                        && front.equalsRange(list.bytes(), o + PackedElements.KEY_OFFSET)) {
                    return list.get(j);
                }
            }
            throw new IllegalStateException("no index " + index + " of " + front + " in its endpoint map");
        }
    }

    /** Per tree and frontend, its run of elements in the tree's endpoint map (one per count's bucket). */
    private static Map<PickTree.Kind, Map<Bytes, Run>> runs(Fragment f) {
        Map<PickTree.Kind, Map<Bytes, Run>> out = new EnumMap<>(PickTree.Kind.class);
        f.elements().forEach((set, els) -> {
            PickTree.Kind kind = PickTree.treeOfMap(set);
            if (kind == null) {
                return;
            }
            PackedElements list = PackedElements.copyOf(els);
            byte[] bytes = list.bytes();
            Map<Bytes, Run> fronts = out.computeIfAbsent(kind, k -> new HashMap<>());
            int i = 0;
            while (i < list.size()) {
                int start = i;
                int o = list.offset(i);
                int frontLength = (bytes[o + 1] & 0xff) - 4;
                boolean ordered = indexOf(bytes, o) == 0;
                i++;
                while (i < list.size() && sameFront(bytes, o, list.offset(i), frontLength)) {
                    ordered &= indexOf(bytes, list.offset(i)) == i - start;
                    i++;
                }
                Bytes front = Bytes.of(Arrays.copyOfRange(bytes, o + PackedElements.KEY_OFFSET,
                        o + PackedElements.KEY_OFFSET + frontLength));
                Run had = fronts.get(front);
                // A frontend split over two runs (not as the renderer writes): searched.
                fronts.put(front, had == null ? new Run(front, list, start, i - start, ordered)
                        : new Run(front, list, 0, had.count() + i - start, false));
            }
        });
        return out;
    }

    /** The index (host order, the key's last 4 bytes) of the packed element at {@code o}. */
    private static int indexOf(byte[] in, int o) {
        int end = o + PackedElements.KEY_OFFSET + (in[o + 1] & 0xff);
        return in[end - 4] & 0xff | (in[end - 3] & 0xff) << 8 | (in[end - 2] & 0xff) << 16 | (in[end - 1] & 0xff) << 24;
    }

    /** Whether the packed elements at {@code a} and {@code b} have the same frontend (their keys but the index). */
    private static boolean sameFront(byte[] in, int a, int b, int frontLength) {
        return (in[b + 1] & 0xff) - 4 == frontLength && Arrays.equals(in, a + PackedElements.KEY_OFFSET,
                a + PackedElements.KEY_OFFSET + frontLength, in, b + PackedElements.KEY_OFFSET, b + PackedElements.KEY_OFFSET + frontLength);
    }
}
