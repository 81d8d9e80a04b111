package io.nftproxy.proxy.sync;

/** Observes the sync loop (metrics, health). Called on the loop's thread. */
public interface SyncListener {
    /** A change arrived and a sync is queued. */
    default void queued(long epochMillis) {
    }

    default void synced(SyncResult result, long durationNanos, io.nftproxy.proxy.source.ObjectStore.Snapshot snapshot) {
    }

    default void failed(boolean full, Exception error) {
    }
}
