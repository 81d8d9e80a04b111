package io.nftproxy.proxy.render;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.nftproxy.proxy.model.Endpoint;

/**
 * The number a sticky port's endpoint is remembered by in ClientIP affinity ({@link StickyPick}):
 * given when the endpoint comes, kept while it stays, never handed to another endpoint while
 * it does. A client remembered by an endpoint's number keeps that endpoint for as long as it
 * stays, whatever else comes and goes, as kube-proxy's affinity set per endpoint does; a number
 * whose endpoint went finds nothing, and its clients pick again.
 *
 * <p>A new endpoint takes a number never given before, lowest first, below the range its port
 * needs with one endpoint more; then the number freed longest ago. Clients that still remember a freed number
 * (until they reconnect, when the kernel deletes the entry, or until it expires) would be sent
 * to the endpoint that takes it next: taking the oldest makes that as unlikely as the range
 * allows. A pure function of the previous numbers and the current endpoints.
 *
 * @param byId  the endpoint holding each number, null where the number is free
 * @param freed the free numbers below {@code byId.size()}, the longest free first
 */
public record AffinityIds(List<Endpoint> byId, List<Integer> freed) {
    public static final AffinityIds NONE = new AffinityIds(List.of(), List.of());

    public AffinityIds {
        byId = java.util.Collections.unmodifiableList(new ArrayList<>(byId)); // holds nulls: not List.copyOf
        freed = List.copyOf(freed);
    }

    /** How many numbers the check must ask for: the endpoint bucket of the highest number held plus one (8 at least). */
    public int range() {
        int highest = -1;
        for (int id = byId.size() - 1; id >= 0; id--) {
            if (byId.get(id) != null) {
                highest = id;
                break;
            }
        }
        return PickTree.bucketHigh(Math.max(1, highest + 1));
    }

    /** The numbers held, in number order: number to endpoint. */
    public Map<Integer, Endpoint> held() {
        Map<Integer, Endpoint> out = new LinkedHashMap<>();
        for (int id = 0; id < byId.size(); id++) {
            if (byId.get(id) != null) {
                out.put(id, byId.get(id));
            }
        }
        return out;
    }

    /** These numbers applied to the port's current endpoints. */
    public AffinityIds next(List<Endpoint> current) {
        Map<Endpoint.AddressPort, Endpoint> unplaced = new LinkedHashMap<>();
        for (Endpoint e : current) {
            unplaced.put(e.addressPort(), e);
        }
        Endpoint[] ids = new Endpoint[byId.size()];
        List<Integer> free = new ArrayList<>(freed);
        int highestKept = -1;
        for (int id = 0; id < ids.length; id++) {
            Endpoint had = byId.get(id);
            if (had == null) {
                continue;
            }
            Endpoint now = unplaced.remove(had.addressPort()); // the current copy (readiness may differ)
            if (now == null) {
                free.add(id); // gone: freed now, so after every number freed before
            } else {
                ids[id] = now;
                highestKept = id;
            }
        }
        // One spare number at least: a port whose count fills its range (8, 16 …) would otherwise
        // hand a number that went straight to the endpoint that came in the same sync, and the
        // clients remembered by it would go there rather than pick again.
        int cap = PickTree.bucketHigh(Math.min(NftRenderer.MAX_PLAIN_PICK, Math.max(current.size() + 1, highestKept + 1)));
        List<Endpoint> out = new ArrayList<>(Arrays.asList(ids));
        for (Endpoint e : unplaced.values()) {
            if (out.size() < cap) {
                out.add(e); // never given before
            } else {
                int id = takeOldest(free, cap);
                out.set(id, e);
            }
        }
        return new AffinityIds(out, free);
    }

    /** Removes and returns the number freed longest ago below {@code cap}, or the oldest if none is. */
    private static int takeOldest(List<Integer> free, int cap) {
        for (int i = 0; i < free.size(); i++) {
            if (free.get(i) < cap) {
                return free.remove(i);
            }
        }
        if (free.isEmpty()) {
            throw new IllegalStateException("no free affinity number for a port of more endpoints than its range");
        }
        return free.remove(0);
    }
}
