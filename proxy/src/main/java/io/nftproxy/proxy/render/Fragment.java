package io.nftproxy.proxy.render;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.PackedElementsBySet;
import io.nftproxy.netlink.nft.SetElement;

/**
 * What one contributor (the global skeleton, or one service port) puts into a family's table:
 * chains it owns, sets it owns, and elements it adds to sets (its own or shared ones). Fragments
 * of unchanged services are reused as they are, which keeps a partial sync proportional to the
 * change. {@code unmanagedSets} names owned sets whose elements the kernel writes (affinity).
 * {@code slots} is the order the port's endpoints hold their indices in, which the port's next
 * fragment keeps ({@link EndpointSlots}).
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
}
