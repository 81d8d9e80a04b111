package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.TableNames.*;

import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import io.nftproxy.proxy.config.ProxyConfig;

/** Which of our sets' elements carry a connection counter, with --service-counters and --endpoint-counters. */
public final class CountedSets {
    private CountedSets() {
    }

    /**
     * The sets whose elements carry a connection counter with --service-counters: each frontend
     * once, where it is dispatched (counting its connections) or refused, and the external chains'
     * drops. One element per frontend: small beside the endpoint maps.
     */
    public static final List<String> SERVICE_COUNTED_SETS = List.of(SERVICE_IPS, SERVICE_NODEPORTS,
            SERVICE_CHAINS, NODEPORT_CHAINS, LOCAL_IPS, LOCAL_NODEPORTS, CHAIN_ENDPOINTS, NO_ENDPOINT_REJECT,
            NO_ENDPOINT_DROP, NODEPORT_NO_ENDPOINT_REJECT, NODEPORT_NO_ENDPOINT_DROP, NO_LOCAL_ENDPOINT,
            NODEPORT_NO_LOCAL_ENDPOINT);
    /**
     * With --endpoint-counters, these count as well: the pick trees' endpoint maps ({@link
     * TableNames#endpointMapBase}), blocks past the roots' included, an element per frontend and endpoint.
     * (The endpoints of services with chains of their own count in {@link TableNames#CHAIN_ENDPOINTS}.)
     */
    public static List<String> endpointCountedSets() {
        return Stream.concat(PickTree.allEndpointMaps().stream().sorted(), PickTree.bigBlockMaps().stream()).toList();
    }

    private static final Set<String> SERVICE_COUNTED = Set.copyOf(SERVICE_COUNTED_SETS);

    /** Whether the elements of {@code set} carry a counter with these settings. */
    public static boolean counts(ProxyConfig config, String set) {
        return config.serviceCounters() && (SERVICE_COUNTED.contains(set)
                || config.endpointCounters() && PickTree.endpointsBaseOf(set) != null);
    }

    /** The sets whose elements carry a counter with these settings. */
    public static List<String> countedSets(ProxyConfig config) {
        return !config.serviceCounters() ? List.of() : !config.endpointCounters() ? SERVICE_COUNTED_SETS
                : Stream.concat(SERVICE_COUNTED_SETS.stream(), endpointCountedSets().stream()).toList();
    }

}
