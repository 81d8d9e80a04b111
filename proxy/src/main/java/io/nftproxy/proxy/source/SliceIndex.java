package io.nftproxy.proxy.source;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.source.KubeObject.SliceRecord;

/**
 * The EndpointSlices held, grouped by the service they belong to, and a service's endpoints
 * merged over its slices. Not thread-safe: the store guards it.
 */
final class SliceIndex {
    private final Map<ObjectKey, SliceRecord> slices = new HashMap<>();
    /**
     * A service's slices: nearly always one to a few, held as an immutable set of their own
     * ({@code Set.of}, 24 bytes for one) rather than a {@code HashSet} each (about 180 bytes with
     * its map and table: 1.8 MB at 10,000 services); a service with many slices gets a hash set.
     */
    private final Map<ObjectKey, Set<ObjectKey>> byService = new HashMap<>();
    private static final int FEW = 8;

    /** Adds or replaces a slice; returns the slice it replaced, or null. */
    SliceRecord put(SliceRecord s) {
        SliceRecord old = slices.put(s.key(), s);
        if (old != null) {
            unlink(old);
        }
        if (s.service() != null) {
            byService.compute(s.service(), (svc, keys) -> with(keys, s.key()));
        }
        return old;
    }

    /** Removes a slice; returns it, or null if it was not held. */
    SliceRecord remove(ObjectKey key) {
        SliceRecord old = slices.remove(key);
        if (old != null) {
            unlink(old);
        }
        return old;
    }

    private void unlink(SliceRecord old) {
        if (old.service() == null) {
            return;
        }
        byService.computeIfPresent(old.service(), (svc, keys) -> without(keys, old.key()));
    }

    private static Set<ObjectKey> with(Set<ObjectKey> keys, ObjectKey key) {
        if (keys == null) {
            return Set.of(key);
        }
        if (keys.contains(key)) {
            return keys;
        }
        if (keys.size() < FEW) {
            ObjectKey[] more = keys.toArray(new ObjectKey[keys.size() + 1]);
            more[keys.size()] = key;
            return Set.of(more);
        }
        Set<ObjectKey> many = keys instanceof HashSet<ObjectKey> h ? h : new HashSet<>(keys);
        many.add(key);
        return many;
    }

    /** The keys without {@code key}; null (no entry) when none is left. */
    private static Set<ObjectKey> without(Set<ObjectKey> keys, ObjectKey key) {
        if (!keys.contains(key)) {
            return keys;
        }
        if (keys.size() == 1) {
            return null;
        }
        if (keys instanceof HashSet<ObjectKey> many && keys.size() > FEW + 1) {
            many.remove(key);
            return many;
        }
        Set<ObjectKey> fewer = new HashSet<>(keys);
        fewer.remove(key);
        return Set.copyOf(fewer);
    }

    /**
     * A service's endpoints per service port, over all its slices, each address and port once.
     * Slices are merged in name order, so that which copy of a duplicated endpoint wins does not
     * depend on the order the slices arrived in.
     */
    Map<ServicePortName, List<Endpoint>> endpoints(ObjectKey service) {
        Map<ServicePortName, List<Endpoint>> eps = new LinkedHashMap<>();
        List<ObjectKey> keys = new ArrayList<>(byService.getOrDefault(service, Set.of()));
        keys.sort(Comparator.comparing(ObjectKey::name));
        for (ObjectKey sk : keys) {
            slices.get(sk).endpoints().forEach((id, list) -> eps.computeIfAbsent(id, x -> new ArrayList<>()).addAll(list));
        }
        eps.replaceAll((id, list) -> dedupe(list));
        return eps;
    }

    /** Up to this many endpoints are compared pairwise: cheaper than hashing them. */
    private static final int SMALL = 32;

    private static boolean distinct(List<Endpoint> list) {
        for (int i = 1; i < list.size(); i++) {
            Endpoint e = list.get(i);
            for (int j = 0; j < i; j++) {
                Endpoint o = list.get(j);
                if (o.port() == e.port() && o.sameAddress(e)) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * The same address and port listed twice (in two slices during an update) is one endpoint; a
     * copy that is not terminating wins over one that is, whichever slice comes first.
     */
    static List<Endpoint> dedupe(List<Endpoint> list) {
        if (list.size() <= SMALL && distinct(list)) {
            return List.copyOf(list); // the common case, without a map per service port
        }
        Map<Endpoint.AddressPort, Endpoint> byAddr = new LinkedHashMap<>();
        for (Endpoint e : list) {
            Endpoint.AddressPort k = e.addressPort();
            Endpoint had = byAddr.putIfAbsent(k, e);
            if (had != null && had.terminating() && !e.terminating()) {
                byAddr.put(k, e);
            }
        }
        return List.copyOf(byAddr.values());
    }
}
