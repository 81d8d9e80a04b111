package io.nftproxy.proxy.render;

import java.util.List;
import java.util.stream.Stream;

import io.nftproxy.proxy.config.ProxyConfig;

/** Which of our sets' elements carry a connection counter ({@link CountedSet}), with --service-counters and --endpoint-counters. */
public final class CountedSets {
    private CountedSets() {
    }

    /**
     * The sets whose elements carry a connection counter with --service-counters: each frontend
     * once, where it is dispatched (counting its connections) or refused, and the external chains'
     * drops. One element per frontend: small beside the endpoint maps.
     */
    public static final List<String> SERVICE_COUNTED_SETS = Stream.of(CountedSet.values())
            .filter(s -> !s.endpointMaps()).map(CountedSet::setName).toList();
    /**
     * With --endpoint-counters, these count as well: the pick trees' endpoint maps ({@link
     * TableNames#endpointMapBase}), blocks past the roots' included, an element per frontend and endpoint,
     * and the hashed picks' slots maps, an element per frontend and slot.
     * (The endpoints of services with chains of their own count in {@link TableNames#CHAIN_ENDPOINTS}.)
     */
    public static List<String> endpointCountedSets() {
        return Stream.of(PickTree.allEndpointMaps().stream().sorted(), PickTree.bigBlockMaps().stream(),
                MaglevPick.allSlotsMaps().stream()).flatMap(s -> s).toList();
    }

    /** Whether the elements of {@code set} carry a counter with these settings. */
    public static boolean counts(ProxyConfig config, String set) {
        CountedSet counted = config.serviceCounters() ? CountedSet.of(set) : null;
        return counted != null && (!counted.endpointMaps() || config.endpointCounters());
    }

    /** The sets whose elements carry a counter with these settings. */
    public static List<String> countedSets(ProxyConfig config) {
        return !config.serviceCounters() ? List.of() : !config.endpointCounters() ? SERVICE_COUNTED_SETS
                : Stream.concat(SERVICE_COUNTED_SETS.stream(), endpointCountedSets().stream()).toList();
    }

}
