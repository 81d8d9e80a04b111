package io.nftproxy.proxy.sync;

import java.time.Duration;

/**
 * When the sync loop syncs, as a pure function of time: the bookkeeping of kube-proxy's bounded
 * frequency runner (syncs at most every min-sync-period, a full sync every full-sync period, backoff
 * doubling from min-sync-period, or 100 ms, to 30 s after failures) and of our repairs. The loop
 * owns one, under its lock, and passes it {@code System.nanoTime()}; tests pass virtual time.
 * Not thread-safe.
 */
final class SyncSchedule {
    static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
    /**
     * The least time from one full sync to a check's: checks come from other users' commits,
     * which on a busy node meet ours often, and a re-assertion at 100,000 services takes seconds.
     */
    static final Duration CHECK_SPACING = Duration.ofSeconds(30);

    /** Sync now ({@code waitNanos} 0) with these flags, or wait that long first. */
    record Next(long waitNanos, boolean full, boolean rebuild, boolean ownNames) {
        boolean now() {
            return waitNanos == 0;
        }
    }

    private final long minNanos;
    private final long periodNanos;
    private boolean pending = true;
    private boolean needFull = true;
    private boolean needRebuild;
    private boolean needCheck;
    private long lastSync;
    private long lastFull;
    private boolean tidy;
    private long tidyAt;
    private boolean needOwnNames;
    private int failures;
    private boolean started;

    SyncSchedule(Duration minSyncPeriod, Duration syncPeriod) {
        this.minNanos = minSyncPeriod.toNanos();
        this.periodNanos = syncPeriod.toNanos();
    }

    /** A change arrived; true when none was pending before. */
    boolean request() {
        boolean first = !pending;
        pending = true;
        return first;
    }

    /** Drift: the next sync rebuilds; true when no repair was pending before. */
    boolean requestRepair() {
        boolean first = !needRebuild;
        needRebuild = true;
        needFull = true;
        return first;
    }

    /**
     * Someone may have changed our tables unseen: a full sync (a re-assertion, which repairs what
     * it finds and rebuilds only on a difference), {@link #CHECK_SPACING} after the last full
     * sync at the earliest; true when none was due before.
     */
    boolean requestCheck() {
        boolean first = !needCheck && !needFull;
        needCheck = true;
        return first;
    }

    /** What to do at {@code now}; when it is a sync, the requests it serves are taken. */
    Next next(long now) {
        if (!started) {
            started = true;
            lastSync = now - backoffNanos();
            lastFull = now;
        }
        long fullDue = needCheck ? Math.min(lastFull + periodNanos, lastFull + CHECK_SPACING.toNanos())
                : lastFull + periodNanos;
        long earliest = lastSync + backoffNanos();
        boolean wanted = pending || needFull || needOwnNames || now - fullDue >= 0 || tidy && now - tidyAt >= 0;
        if (!wanted || now - earliest < 0) {
            long due = tidy && tidyAt - fullDue < 0 ? tidyAt : fullDue;
            long until = wanted ? earliest : Math.max(earliest, due);
            return new Next(Math.max(1, until - now), false, false, false);
        }
        tidy = false;
        boolean ownNames = needOwnNames && !needRebuild;
        boolean full = needFull || ownNames || now - fullDue >= 0;
        boolean rebuild = needRebuild;
        // Taken now: a request that arrives while this sync runs is a new one, served next.
        needCheck &= !full;
        needFull = false;
        needRebuild = false;
        needOwnNames = false;
        pending = false;
        lastSync = now;
        return new Next(0, full, rebuild, ownNames);
    }

    /**
     * A sync is wanted at {@code at} (nanoTime) even without changes: the syncer holds something
     * until then (a change's transitional elements). Replaces an earlier request.
     */
    void tidyAt(long at) {
        tidy = true;
        tidyAt = at;
    }

    /**
     * The tables carry the other generation's names after a takeover beside them (a restart, a
     * repair): the next sync rebuilds them beside themselves once more, under their own names
     * ({@code Generation}), without counting as a repair. Served after what is pending, at the
     * pace of every sync.
     */
    void requestOwnNames() {
        needOwnNames = true;
    }

    void succeeded(long now, boolean full) {
        failures = 0;
        if (full) {
            lastFull = now;
        }
    }

    /** A failed sync is retried as a full one (a failed repair as a repair) after the backoff. */
    void failed(boolean rebuild) {
        failures++;
        needFull = true;
        needRebuild |= rebuild;
    }

    long backoffNanos() {
        if (failures == 0) {
            return minNanos;
        }
        long d = minNanos == 0 ? Duration.ofMillis(100).toNanos() : minNanos;
        for (int i = 1; i < failures && d < MAX_BACKOFF.toNanos(); i++) {
            d *= 2;
        }
        return Math.min(d, MAX_BACKOFF.toNanos());
    }
}
