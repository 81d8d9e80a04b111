package io.nftproxy.proxy.sync;

import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.function.ToIntFunction;

import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.plan.StickyTimeout;

/**
 * What the kernel holds of ours, as we committed it: per family, our table's state (its
 * fragments, elements and chains), and the state last synced with the counts its plan kept (ports
 * per set of shared sticky chains and per family); and what we held before forgetting it, whose
 * fragments are still what the same inputs render to, so that a rebuild reuses them.
 *
 * <p>The sync thread reads it without a lock and changes it only while {@link #writing}; readers
 * on other threads (the counters' scrape) read the elements of a set under the read lock ({@link
 * #read}).
 */
final class Committed {
    private final Map<IpFamily, TableState> tables = new EnumMap<>(IpFamily.class);
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private ProxyState lastState;
    private Map<StickyTimeout, Integer> stickyTimeouts = new TreeMap<>();
    private Map<IpFamily, Integer> familyPorts = new EnumMap<>(IpFamily.class);
    private final Map<IpFamily, TableState> forgotten = new EnumMap<>(IpFamily.class);
    private ProxyState forgottenState;

    /** The write lock held until closed: {@code try (Committed.Writing w = committed.writing()) { ... }}. */
    interface Writing extends AutoCloseable {
        @Override
        void close();
    }

    /** Takes the write lock, for the sync thread to change what we hold (a table state, a delta applied). */
    Writing writing() {
        lock.writeLock().lock();
        return () -> lock.writeLock().unlock();
    }

    /** Our table of family {@code f} as committed; null when the kernel holds none of ours. */
    TableState get(IpFamily f) {
        return tables.get(f);
    }

    /** Our tables as committed, by family. */
    Map<IpFamily, TableState> tables() {
        return Collections.unmodifiableMap(tables);
    }

    /** Whether nothing is committed (the next sync writes our tables whole). */
    boolean isEmpty() {
        return tables.isEmpty();
    }

    /** What the kernel took of a sync: these families' tables anew, those of {@code dropped} gone. Under {@link #writing}. */
    void replace(Map<IpFamily, TableState> fresh, Collection<IpFamily> dropped) {
        requireWriting();
        tables.putAll(fresh);
        dropped.forEach(tables::remove);
    }

    /** The state a sync made ours once the kernel holds all of it, and its plan's counts. */
    void synced(ProxyState state, SyncPlan plan) {
        forgotten.clear();
        forgottenState = null;
        lastState = state;
        stickyTimeouts = plan.stickyTimeouts();
        familyPorts = plan.familyPorts();
    }

    /**
     * Nothing held any more (the kernel may no longer hold it): what was held is kept as
     * forgotten, for a rebuild to reuse its fragments.
     */
    void forget() {
        if (!tables.isEmpty()) {
            forgotten.clear();
            forgotten.putAll(tables);
            forgottenState = lastState;
        }
        clear();
    }

    /**
     * Nothing held any more (a sync failed half-way: the next replaces our tables whole), not
     * kept as forgotten; what was forgotten before stays, for that rebuild to reuse.
     */
    void clear() {
        try (Writing w = writing()) {
            tables.clear();
        }
        lastState = null;
    }

    /** The state last synced; null before the first sync and after {@link #forget}. */
    ProxyState lastState() {
        return lastState;
    }

    /** The sets of shared sticky chains the state last synced uses. */
    Set<StickyTimeout> stickyTimeouts() {
        return stickyTimeouts.keySet();
    }

    /** What was held in family {@code f} before {@link #forget}; null when nothing was. */
    TableState forgotten(IpFamily f) {
        return forgotten.get(f);
    }

    /** The state what was forgotten was synced from. */
    ProxyState forgottenState() {
        return forgottenState;
    }

    /** What a sync's plan starts from ({@link SyncPlan#of}). */
    SyncPlan.Held held() {
        return new SyncPlan.Held(lastState, tables.keySet(), () -> {
            Set<ServicePortName> ports = new TreeSet<>();
            for (TableState ts : tables.values()) {
                for (Contributor c : ts.fragments.keySet()) {
                    if (!c.isGlobals()) {
                        ports.add(c.port());
                    }
                }
            }
            return ports;
        }, stickyTimeouts, familyPorts);
    }

    /** {@code read} of the elements we hold in one of our sets, under the read lock; {@code none} when we hold no such set. */
    <T> T read(IpFamily f, String set, Function<ElementTable, T> read, T none) {
        lock.readLock().lock();
        try {
            TableState ts = tables.get(f);
            ElementTable t = ts == null ? null : ts.elements.get(set);
            return t == null ? none : read.apply(t);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The sum over our tables of {@code f} (chains, rules, elements). */
    int count(ToIntFunction<TableState> f) {
        return tables.values().stream().mapToInt(f).sum();
    }

    private void requireWriting() {
        if (!lock.isWriteLockedByCurrentThread()) {
            throw new IllegalStateException("what we hold is changed only while writing");
        }
    }
}
