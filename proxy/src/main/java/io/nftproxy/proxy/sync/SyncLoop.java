package io.nftproxy.proxy.sync;

import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.proxy.source.ObjectStore;

/**
 * Runs syncs the way kube-proxy rate-limits them: changes wake the loop, but two syncs are at
 * least {@code minSyncPeriod} apart (a burst of changes becomes one sync), every
 * {@code syncPeriod} a full sync re-asserts everything, and after a failure the next sync is full
 * and retried with backoff.
 */
public final class SyncLoop implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SyncLoop.class);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    private final ObjectStore store;
    private final Backend syncer;
    private final Duration minSyncPeriod;
    private final Duration syncPeriod;
    private final SyncListener listener;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wake = lock.newCondition();
    private boolean pending = true;
    private boolean needFull = true;
    private boolean needRebuild;
    private boolean closed;
    private long lastSyncNanos = Long.MIN_VALUE / 2;
    private long lastFullNanos = System.nanoTime();
    private int failures;
    private Thread thread;

    public SyncLoop(ObjectStore store, Backend syncer, Duration minSyncPeriod, Duration syncPeriod, SyncListener listener) {
        this.store = store;
        this.syncer = syncer;
        this.minSyncPeriod = minSyncPeriod;
        this.syncPeriod = syncPeriod;
        this.listener = listener;
        store.onChange(this::requestSync);
    }

    public void requestSync() {
        boolean first;
        lock.lock();
        try {
            first = !pending;
            pending = true;
            wake.signalAll();
        } finally {
            lock.unlock();
        }
        if (first) {
            listener.queued(System.currentTimeMillis()); // outside the lock: listeners may take their own
        }
    }

    /** Asks for a full sync soon (someone else changed our tables). */
    public void requestFullSync() {
        lock.lock();
        try {
            needFull = true;
            wake.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Someone else changed our tables: the next sync forgets what we committed and replaces the
     * tables whole (which also removes anything foreign added inside them). Many events of one
     * change coalesce into one repair.
     */
    public void requestRepair() {
        boolean first;
        lock.lock();
        try {
            first = !needRebuild;
            needRebuild = true;
            needFull = true;
            wake.signalAll();
        } finally {
            lock.unlock();
        }
        if (first) {
            listener.driftSeen();
        }
    }

    /** One sync now: full when asked, or when nothing was committed yet. */
    public SyncResult syncOnce(boolean full) throws Exception {
        ObjectStore.Snapshot snap = store.snapshot();
        long t0 = System.nanoTime();
        boolean doFull = full || syncer.needsFull();
        SyncResult r = syncer.sync(snap.state(), doFull ? null : snap.changed());
        long took = System.nanoTime() - t0;
        listener.synced(r, took, snap);
        return r;
    }

    public void start() {
        thread = new Thread(this::loop, "sync-loop");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        while (true) {
            boolean full;
            boolean rebuild;
            lock.lock();
            try {
                while (!closed) {
                    long now = System.nanoTime();
                    long fullDue = lastFullNanos + syncPeriod.toNanos();
                    long earliest = lastSyncNanos + backoff().toNanos();
                    boolean due = (pending || needFull || now >= fullDue) && now >= earliest;
                    if (due) {
                        break;
                    }
                    long waitUntil = pending || needFull ? earliest : Math.max(earliest, fullDue);
                    wake.awaitNanos(Math.max(1_000_000, waitUntil - now));
                }
                if (closed) {
                    return;
                }
                full = needFull || System.nanoTime() >= lastFullNanos + syncPeriod.toNanos();
                // Taken now: a request that arrives while this sync runs is a new one, served next.
                needFull = false;
                rebuild = needRebuild;
                needRebuild = false;
                pending = false;
                lastSyncNanos = System.nanoTime();
            } catch (InterruptedException e) {
                return;
            } finally {
                lock.unlock();
            }
            try {
                if (rebuild) {
                    syncer.forgetCommitted();
                }
                SyncResult r = syncOnce(full);
                if (rebuild) {
                    listener.repaired();
                }
                lock.lock();
                try {
                    failures = 0;
                    if (r.full()) {
                        lastFullNanos = System.nanoTime();
                    }
                } finally {
                    lock.unlock();
                }
            } catch (Exception e) {
                LOG.error("sync failed; the kernel keeps the last good ruleset; retrying with a full sync: {}",
                        e.getMessage());
                // What the kernel holds is no longer what we recorded (a failed repair, a table
                // deleted under us): the retry rebuilds from nothing.
                syncer.forgetCommitted();
                listener.failed(full, e);
                lock.lock();
                try {
                    failures++;
                    needFull = true;
                    needRebuild |= rebuild; // a repair that failed is still owed
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    private Duration backoff() {
        if (failures == 0) {
            return minSyncPeriod;
        }
        Duration d = minSyncPeriod.isZero() ? Duration.ofMillis(100) : minSyncPeriod;
        for (int i = 1; i < failures && d.compareTo(MAX_BACKOFF) < 0; i++) {
            d = d.multipliedBy(2);
        }
        return d.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : d;
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            wake.signalAll();
        } finally {
            lock.unlock();
        }
        if (thread != null) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
