package io.nftproxy.proxy.model;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * A map with cheap immutable snapshots, for the store that hands the sync loop a consistent view
 * of every service after each change. Copying the whole map per snapshot cost milliseconds per
 * change at 30,000 services (and grew with them); here the entries live in {@value #SHARDS}
 * hash maps, a snapshot copies the array of them, and the first write to a shard after a snapshot
 * copies that shard alone (1/{@value #SHARDS} of the entries). One writer; snapshots may be read
 * by any thread.
 */
public final class VersionedMap<K, V> {
    static final int SHARDS = 256;

    @SuppressWarnings("unchecked")
    private final HashMap<K, V>[] shards = new HashMap[SHARDS];
    /** Shards a snapshot shares: copied before the next write. */
    private final boolean[] shared = new boolean[SHARDS];
    private int size;

    public VersionedMap() {
        for (int i = 0; i < SHARDS; i++) {
            shards[i] = new HashMap<>();
        }
    }

    private static int shard(Object key) {
        int h = key.hashCode();
        h ^= h >>> 16;
        h ^= h >>> 8;
        return h & (SHARDS - 1);
    }

    private HashMap<K, V> writable(int i) {
        if (shared[i]) {
            shards[i] = new HashMap<>(shards[i]);
            shared[i] = false;
        }
        return shards[i];
    }

    public V get(Object key) {
        return shards[shard(key)].get(key);
    }

    public V put(K key, V value) {
        if (key == null || value == null) {
            throw new NullPointerException("no null keys or values");
        }
        HashMap<K, V> m = writable(shard(key));
        V was = m.put(key, value);
        if (was == null) {
            size++;
        }
        return was;
    }

    public V remove(Object key) {
        int i = shard(key);
        if (!shards[i].containsKey(key)) {
            return null;
        }
        V was = writable(i).remove(key);
        size--;
        return was;
    }

    public int size() {
        return size;
    }

    /** The map as it is now; later writes do not change it. */
    public Map<K, V> snapshot() {
        Arrays.fill(shared, true);
        return new Snapshot<>(shards.clone(), size);
    }

    /** An immutable view of the shards as they were. */
    static final class Snapshot<K, V> extends AbstractMap<K, V> {
        private final Map<K, V>[] shards;
        private final int size;

        private Snapshot(Map<K, V>[] shards, int size) {
            this.shards = shards;
            this.size = size;
        }

        @Override
        public V get(Object key) {
            return key == null ? null : shards[shard(key)].get(key);
        }

        @Override
        public boolean containsKey(Object key) {
            return key != null && shards[shard(key)].containsKey(key);
        }

        @Override
        public int size() {
            return size;
        }

        @Override
        public Set<Entry<K, V>> entrySet() {
            return new AbstractSet<>() {
                @Override
                public Iterator<Entry<K, V>> iterator() {
                    return new Iterator<>() {
                        private int shard = -1;
                        private Iterator<Entry<K, V>> it = Collections.emptyIterator();

                        @Override
                        public boolean hasNext() {
                            while (!it.hasNext() && shard + 1 < shards.length) {
                                it = Collections.unmodifiableMap(shards[++shard]).entrySet().iterator();
                            }
                            return it.hasNext();
                        }

                        @Override
                        public Entry<K, V> next() {
                            if (!hasNext()) {
                                throw new NoSuchElementException();
                            }
                            return it.next();
                        }
                    };
                }

                @Override
                public int size() {
                    return size;
                }
            };
        }
    }
}
