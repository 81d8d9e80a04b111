package io.nftproxy.proxy.sync;

import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.proxy.source.ObjectStore;

/**
 * Runs syncs the way kube-proxy rate-limits them: changes wake the loop, but two syncs are at
 * least {@code minSyncPeriod} apart (a burst of changes becomes one sync), every
 * {@code fullSyncPeriod} a full sync re-asserts everything, and after a failure the next sync is
 * full and retried with backoff.
 */
public final class SyncLoop implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SyncLoop.class);

    private final ObjectStore store;
    private final Backend syncer;
    private final SyncListener listener;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wake = lock.newCondition();
    /** When to sync; guarded by {@link #lock}. */
    private final SyncSchedule schedule;
    private boolean closed;
    private Thread thread;

    public SyncLoop(ObjectStore store, Backend syncer, Duration minSyncPeriod, Duration fullSyncPeriod, SyncListener listener) {
        this.store = store;
        this.syncer = syncer;
        this.schedule = new SyncSchedule(minSyncPeriod, fullSyncPeriod);
        this.listener = listener;
        store.onChange(this::requestSync);
    }

    public void requestSync() {
        if (wakeFor(schedule::request)) {
            listener.queued(System.currentTimeMillis()); // outside the lock: listeners may take their own
        }
    }

    /** Records a request in the schedule and wakes the loop; whether it is news (none of its kind pending). */
    private boolean wakeFor(BooleanSupplier request) {
        lock.lock();
        try {
            boolean first = request.getAsBoolean();
            wake.signalAll();
            return first;
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
        if (wakeFor(schedule::requestRepair)) {
            listener.driftSeen();
        }
    }

    /**
     * Someone else committed while we committed without listening, perhaps to our tables: the
     * next sync re-asserts ours (a full sync over what we hold, in small transactions; a
     * difference makes it rebuild). Cheaper for everyone than a rebuild, whose one large batch
     * would hold every other nftables user of the node, and other users commit often.
     */
    public void requestCheck() {
        if (wakeFor(schedule::requestCheck)) {
            LOG.info("nf_tables changed while we committed; re-asserting our rules");
            listener.checkQueued();
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
            SyncSchedule.Next next = null;
            lock.lock();
            try {
                while (!closed) {
                    SyncSchedule.Next n = schedule.next(System.nanoTime());
                    if (n.now()) {
                        next = n; // the schedule has taken the requests this sync serves
                        break;
                    }
                    wake.awaitNanos(Math.max(1_000_000, n.waitNanos()));
                }
                if (closed) {
                    return;
                }
            } catch (InterruptedException e) {
                return;
            } finally {
                lock.unlock();
            }
            try {
                if (next.rebuild() || next.ownNames()) {
                    if (next.ownNames()) {
                        LOG.info("rebuilding our tables beside themselves under their own names (a takeover left them"
                                + " under the other generation's)");
                    }
                    syncer.forgetCommitted();
                }
                SyncResult r = syncOnce(next.full());
                if (next.rebuild()) {
                    listener.repaired();
                }
                lock.lock();
                try {
                    schedule.succeeded(System.nanoTime(), r.full());
                    long due = syncer.dueNanos();
                    if (due != Backend.NOTHING_DUE) {
                        schedule.tidyAt(due);
                    }
                    if (syncer.underOtherNames()) {
                        schedule.requestOwnNames();
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
                listener.failed(next.full(), e);
                lock.lock();
                try {
                    schedule.failed(next.rebuild());
                } finally {
                    lock.unlock();
                }
            }
        }
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
