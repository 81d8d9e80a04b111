package io.nftproxy.proxy.render;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.PackedElementsBySet;
import io.nftproxy.netlink.nft.SetElement;

/**
 * What one contributor (the global skeleton, or one service port) puts into a family's table:
 * chains it owns, sets it owns, and elements it adds to sets (its own or shared ones). Fragments
 * of unchanged services are reused as they are, which keeps a partial sync proportional to the
 * change. {@code unmanagedSets} names owned sets whose elements the kernel writes (affinity).
 * {@code slots} is the order the port's endpoints hold their indices in, which the port's next
 * fragment keeps ({@link EndpointSlots}). A service's fragment says what it needs of the globals
 * ({@link #demands}) and the globals' what they declare ({@link #declares}): a sync counts those
 * without knowing the layout.
 */
public record Fragment(Map<String, DesiredChain> chains, Map<String, NftSet> sets,
                       Map<String, List<SetElement>> elements, Set<String> unmanagedSets, EndpointSlots slots) {
    public static final Fragment EMPTY = new Fragment(Map.of(), Map.of(), Map.of(), Set.of(), EndpointSlots.NONE);

    /**
     * The committed state keeps one fragment per service port for as long as the daemon runs, so
     * its elements are kept packed together (see {@link PackedElementsBySet}) and the maps most
     * services leave empty take no room.
     */
    public Fragment {
        chains = chains.isEmpty() ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(chains));
        sets = sets.isEmpty() ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(sets));
        elements = PackedElementsBySet.copyOf(elements);
        unmanagedSets = Set.copyOf(unmanagedSets);
    }

    /**
     * The global sets this fragment puts elements in that the globals declare only while some
     * fragment does ({@link NftRenderer#isOnDemandSet}: the pick trees' blocks for counts above
     * MAX_SHARED_PICK, the sticky ports' ranges of endpoint numbers, the firewall shards), and the
     * pick trees it picks through ({@link PickTree.Kind#inUse}: a tree, its maps and leaves are
     * declared while some frontend picks through it). A sync counts them as fragments come and
     * go, and gives the globals their names.
     */
    public Set<String> demands() {
        Set<String> out = null;
        for (String set : elements.keySet()) {
            String tree = PickTree.inUseOf(set);
            boolean onDemand = NftRenderer.isOnDemandSet(set);
            if (tree != null || onDemand) {
                if (out == null) {
                    out = new TreeSet<>();
                }
                if (tree != null) {
                    out.add(tree);
                }
                if (onDemand) {
                    out.add(set);
                    String also = PickTree.alsoDemanded(set);
                    if (also != null) {
                        out.add(also);
                    }
                }
            }
        }
        return out == null ? Set.of() : out;
    }

    /** Of a globals fragment: the on-demand sets and trees it declares, in the terms of {@link #demands}. */
    public Set<String> declares() {
        Set<String> out = new TreeSet<>();
        for (String set : sets.keySet()) {
            if (NftRenderer.isOnDemandSet(set)) {
                out.add(set);
            }
        }
        for (PickTree.Kind kind : PickTree.Kind.values()) {
            if (chains.containsKey(kind.root())) {
                out.add(kind.inUse());
            }
        }
        return out;
    }
}
