package io.nftproxy.proxy.sync;

import java.util.List;

import io.nftproxy.proxy.source.ObjectStore;

/**
 * Observes the sync loop (metrics, health). {@link #queued} and {@link #driftSeen} are called on
 * the thread that brought the news (a source's, the drift watcher's), the others on the loop's
 * thread; never while the loop holds its lock. Implementations must be thread-safe.
 */
public interface SyncListener {
    /** A change arrived and a sync is queued. */
    default void queued(long epochMillis) {
    }

    default void synced(SyncResult result, long durationNanos, ObjectStore.Snapshot snapshot) {
    }

    default void failed(boolean full, Exception error) {
    }

    /** Someone else changed our rules; a repair is queued. */
    default void driftSeen() {
    }

    /**
     * Another nftables user committed while we committed without listening; a re-assertion of
     * our rules is queued (called once per check queued, on the committing thread).
     */
    default void checkQueued() {
    }

    /** A sync that rebuilt our rules after drift succeeded: one repair, however many events led to it. */
    default void repaired() {
    }

    /** All of these, in order. */
    static SyncListener all(List<SyncListener> listeners) {
        return new SyncListener() {
            @Override
            public void queued(long epochMillis) {
                listeners.forEach(l -> l.queued(epochMillis));
            }

            @Override
            public void synced(SyncResult result, long durationNanos, ObjectStore.Snapshot snapshot) {
                listeners.forEach(l -> l.synced(result, durationNanos, snapshot));
            }

            @Override
            public void failed(boolean full, Exception error) {
                listeners.forEach(l -> l.failed(full, error));
            }

            @Override
            public void driftSeen() {
                listeners.forEach(SyncListener::driftSeen);
            }

            @Override
            public void checkQueued() {
                listeners.forEach(SyncListener::checkQueued);
            }

            @Override
            public void repaired() {
                listeners.forEach(SyncListener::repaired);
            }
        };
    }
}
