package io.nftproxy.proxy.render;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.nftproxy.proxy.model.Endpoint;

/**
 * The index each endpoint of a service port holds in the shared maps ("frontend . index" to
 * endpoint), kept from one sync to the next: an endpoint keeps its index while it stays, and one
 * that goes leaves its index to the endpoint that held the last one. A pure function of the
 * previous order and the current endpoints.
 *
 * <p>Why it matters: each index that moves is an element rewritten, so keeping them makes adding
 * or removing one endpoint change one element per frontend rather than every element after it.
 * ClientIP affinity does not remember indices (one moves when another endpoint goes): a sticky
 * port's endpoints also hold numbers that never move ({@link AffinityIds}).
 *
 * @param cluster    the order of the endpoints cluster-wide traffic picks among
 * @param local      the order of this node's endpoints (traffic policy Local)
 * @param clusterIds the affinity numbers of a sticky port's cluster endpoints ({@link AffinityIds#NONE} otherwise)
 * @param localIds   the same of this node's endpoints
 */
public record EndpointSlots(List<Endpoint> cluster, List<Endpoint> local, AffinityIds clusterIds, AffinityIds localIds) {
    public static final EndpointSlots NONE = new EndpointSlots(List.of(), List.of(), AffinityIds.NONE, AffinityIds.NONE);

    public EndpointSlots {
        cluster = List.copyOf(cluster);
        local = List.copyOf(local);
    }

    /**
     * {@code current} in the order of its indices: an endpoint that was in {@code previous} at an
     * index still below the new count keeps it; the indices left free go, lowest first, to the
     * rest in their order in {@code current} (new endpoints, and ones whose index is now past the
     * end). With one endpoint removed, the last one takes its index; with one added, it takes the
     * new last index.
     */
    static List<Endpoint> assign(List<Endpoint> previous, List<Endpoint> current) {
        if (previous.isEmpty()) {
            return current;
        }
        int k = current.size();
        Map<Endpoint.AddressPort, Endpoint> unplaced = new LinkedHashMap<>();
        for (Endpoint e : current) {
            unplaced.put(e.addressPort(), e);
        }
        Endpoint[] slots = new Endpoint[k];
        for (int i = 0; i < Math.min(k, previous.size()); i++) {
            slots[i] = unplaced.remove(previous.get(i).addressPort()); // the current copy (readiness may differ)
        }
        var rest = unplaced.values().iterator();
        for (int i = 0; i < k; i++) {
            if (slots[i] == null) {
                slots[i] = rest.next();
            }
        }
        return List.of(slots);
    }

    /**
     * This order applied to a port's current endpoints, and with {@code sticky} (a port with
     * ClientIP affinity that is only data) their affinity numbers; without, none are kept.
     */
    EndpointSlots next(List<Endpoint> clusterNow, List<Endpoint> localNow, boolean sticky) {
        return new EndpointSlots(assign(cluster, clusterNow), assign(local, localNow),
                sticky ? clusterIds.next(clusterNow) : AffinityIds.NONE,
                sticky ? localIds.next(localNow) : AffinityIds.NONE);
    }
}
