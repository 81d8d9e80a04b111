package io.nftproxy.proxy.source;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;

/**
 * An informer's cache that keeps, of each object, what the informer itself needs: its key
 * ("namespace/name") and its resource version, by which a relisting finds what changed and what
 * went. The proxy keeps its own model of each object ({@link ObjectStore}), so the informer
 * needs no more; an object asked of the cache is made again from its key and version alone (the
 * old object of an update, a resync's objects, the objects a relisting no longer finds).
 *
 * <p>fabric8's {@code ReducedStateItemStore} keeps the same, but converts every object it is
 * handed into a map of maps to read the version out of it, and every object it hands back from a
 * map (Jackson both ways: at 10,000 services and as many slices, 20,000 whole conversions during
 * the start, which the heap grew for) and holds an array per object beside the version.
 */
final class KeyVersionStore<T extends HasMetadata> implements ItemStore<T> {
    /** Key to resource version ("" for none: the map takes no null). */
    private final ConcurrentHashMap<String, String> versions = new ConcurrentHashMap<>();
    private final Supplier<T> blank;

    KeyVersionStore(Supplier<T> blank) {
        this.blank = blank;
    }

    @Override
    public String getKey(T obj) {
        return Cache.metaNamespaceKeyFunc(obj);
    }

    @Override
    public T put(String key, T obj) {
        String version = obj.getMetadata() == null ? null : obj.getMetadata().getResourceVersion();
        return restore(key, versions.put(key, version == null ? "" : version));
    }

    @Override
    public T remove(String key) {
        return restore(key, versions.remove(key));
    }

    @Override
    public Stream<String> keySet() {
        return versions.keySet().stream();
    }

    @Override
    public Stream<T> values() {
        return versions.entrySet().stream().map(e -> restore(e.getKey(), e.getValue()));
    }

    @Override
    public int size() {
        return versions.size();
    }

    @Override
    public T get(String key) {
        return restore(key, versions.get(key));
    }

    /** Handed over as only its key and version: the informer's events must not be read as whole objects. */
    @Override
    public boolean isFullState() {
        return false;
    }

    /** The object as this cache knows it: its namespace, name and resource version; null when not held. */
    private T restore(String key, String version) {
        if (version == null) {
            return null;
        }
        int slash = key.indexOf('/');
        ObjectMeta meta = new ObjectMeta();
        meta.setNamespace(slash < 0 ? null : key.substring(0, slash));
        meta.setName(key.substring(slash + 1));
        meta.setResourceVersion(version.isEmpty() ? null : version);
        T obj = blank.get();
        obj.setMetadata(meta);
        return obj;
    }
}
