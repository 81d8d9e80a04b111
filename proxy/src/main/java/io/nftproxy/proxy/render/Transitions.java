package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.NftRenderer.MAX_PLAIN_PICK;
import static io.nftproxy.proxy.render.NftRenderer.MAX_SHARED_PICK;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
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
 * count, below which the new generation holds every index. The sync keeps them as one more
 * contributor per port, which a port's own elements override, and takes them away in a sync
 * without changes when their time is past ({@code SyncLoop} asks for it).
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
        Fragment next = neu == null ? Fragment.EMPTY : neu;
        if (sameTreeMaps(old, next)) {
            return Fragment.EMPTY; // the same counts and indices (a node's change re-renders every port)
        }
        Map<String, Map<Bytes, SetElement>> out = new LinkedHashMap<>();
        Map<String, Set<Bytes>> newKeys = new HashMap<>();
        Map<String, Set<Bytes>> oldKeys = new HashMap<>();
        // The old endpoints the new fragment no longer maps, as they were.
        for (Map.Entry<String, List<SetElement>> e : old.elements().entrySet()) {
            String set = e.getKey();
            if (PickTree.treeOfMap(set) == null) {
                // Not the sticky ports' maps by number: a client remembered by the number of an
                // endpoint that went is reached without crossing anything (the kernel's affinity
                // sets do not change with a commit), and must pick again at once, as kube-proxy's
                // clients of a removed endpoint do. One that crosses finds nothing and picks again.
                continue;
            }
            Set<Bytes> kept = keys(next, set, newKeys);
            for (SetElement el : e.getValue()) {
                if (!kept.contains(el.key())) {
                    out.computeIfAbsent(set, k -> new LinkedHashMap<>()).put(el.key(), el);
                }
            }
        }
        // The counts a packet can put together from old and new bits, per tree and frontend.
        for (PickTree.Kind kind : PickTree.Kind.values()) {
            Map<Bytes, Bytes[]> before = byIndex(old, kind);
            Map<Bytes, Bytes[]> after = byIndex(next, kind);
            for (Map.Entry<Bytes, Bytes[]> f : before.entrySet()) {
                Bytes front = f.getKey();
                Bytes[] was = f.getValue();
                Bytes[] now = after.get(front);
                int a = was.length;
                int b = now == null ? 0 : now.length;
                if (a == b) {
                    continue; // the same bits: whatever the flip, the count is one of the two
                }
                Bytes[] to = b > 0 ? now : was;
                for (int c : reachable(kind, declared, a, b)) {
                    String map = kind.endpoints(c);
                    Set<Bytes> held = keys(next, map, newKeys);
                    Set<Bytes> had = keys(old, map, oldKeys);
                    for (int i = 0; i < c; i++) {
                        Bytes key = Bytes.concat(front, Bytes.host32(i));
                        if (!held.contains(key) && !had.contains(key)) {
                            out.computeIfAbsent(map, k -> new LinkedHashMap<>()).putIfAbsent(key,
                                    SetElement.of(key, Data.value(to[i % to.length])));
                        }
                    }
                }
            }
        }
        if (out.isEmpty()) {
            return Fragment.EMPTY;
        }
        Map<String, List<SetElement>> elements = new LinkedHashMap<>();
        out.forEach((set, els) -> elements.put(set, List.copyOf(els.values())));
        return new Fragment(Map.of(), Map.of(), elements, Set.of(), EndpointSlots.NONE);
    }

    /**
     * The transitional elements still held ({@code held}, null for none) together with a new
     * change's: a key in both takes the new change's endpoint.
     */
    public static Fragment merge(Fragment held, Fragment more) {
        if (held == null || held.elements().isEmpty()) {
            return more;
        }
        if (more.elements().isEmpty()) {
            return held;
        }
        Map<String, Map<Bytes, SetElement>> out = new LinkedHashMap<>();
        for (Fragment f : List.of(held, more)) {
            f.elements().forEach((set, els) -> {
                Map<Bytes, SetElement> m = out.computeIfAbsent(set, k -> new LinkedHashMap<>());
                els.forEach(el -> m.put(el.key(), el));
            });
        }
        Map<String, List<SetElement>> elements = new LinkedHashMap<>();
        out.forEach((set, els) -> elements.put(set, List.copyOf(els.values())));
        return new Fragment(Map.of(), Map.of(), elements, Set.of(), EndpointSlots.NONE);
    }

    /**
     * The counts whose last level a packet can reach through the old generation's tree of {@code
     * kind} while its frontend's count goes from {@code a} to {@code b} (0: it picks no more),
     * whichever of its reads the commit's flip falls between; a and b among them when reachable.
     */
    static Set<Integer> reachable(PickTree.Kind kind, Set<String> declared, int a, int b) {
        Set<Integer> out = new TreeSet<>();
        int before = a - 1;
        int after = b > 0 ? b - 1 : 0;
        // At most a read per block set and one per bit before the last level.
        int reads = (MAX_PLAIN_PICK / MAX_SHARED_PICK) + PickTree.BITS + 1;
        for (int flip = 0; flip <= reads; flip++) {
            out.add(PickTree.reached(kind, declared, before, after, flip));
        }
        return out;
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

    /** Per frontend of {@code kind}'s tree, its endpoints (address . port) by index, from the fragment's maps. */
    private static Map<Bytes, Bytes[]> byIndex(Fragment f, PickTree.Kind kind) {
        Map<Bytes, Map<Integer, Bytes>> found = new HashMap<>();
        f.elements().forEach((set, els) -> {
            if (PickTree.treeOfMap(set) != kind) {
                return;
            }
            for (SetElement el : els) {
                Bytes key = el.key();
                int n = key.length() - 4;
                int index = key.get(n) | key.get(n + 1) << 8 | key.get(n + 2) << 16 | key.get(n + 3) << 24;
                found.computeIfAbsent(key.slice(0, n), k -> new HashMap<>()).put(index, ((Data.Value) el.data()).bytes());
            }
        });
        Map<Bytes, Bytes[]> out = new HashMap<>();
        found.forEach((front, m) -> {
            Bytes[] eps = new Bytes[m.size()];
            m.forEach((i, ep) -> {
                if (i < eps.length) {
                    eps[i] = ep;
                }
            });
            out.put(front, eps);
        });
        return out;
    }

    private static Set<Bytes> keys(Fragment f, String set, Map<String, Set<Bytes>> cache) {
        return cache.computeIfAbsent(set, s -> {
            Set<Bytes> out = new HashSet<>();
            for (SetElement el : f.elements().getOrDefault(set, List.of())) {
                out.add(el.key());
            }
            return out;
        });
    }
}
