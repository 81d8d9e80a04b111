package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

/** The sync loop's timing, in virtual time: no sleeps, no threads. */
class SyncScheduleTest {
    static final long S = 1_000_000_000L;

    @Test
    void theFirstSyncIsFullAndImmediate() {
        SyncSchedule s = new SyncSchedule(Duration.ofSeconds(1), Duration.ofSeconds(30));
        SyncSchedule.Next n = s.next(100 * S);
        assertTrue(n.now() && n.full());
    }

    @Test
    void changesWithinTheMinimumPeriodCoalesceIntoOnePartialSync() {
        SyncSchedule s = new SyncSchedule(Duration.ofSeconds(1), Duration.ofSeconds(30));
        assertTrue(s.next(0).now());
        s.succeeded(0, true);
        assertTrue(s.request(), "the first change of a round is news");
        assertFalse(s.request(), "the second is not");
        SyncSchedule.Next early = s.next(S / 4);
        assertFalse(early.now());
        assertEquals(3 * S / 4, early.waitNanos(), "waits out the minimum period");
        SyncSchedule.Next n = s.next(S);
        assertTrue(n.now() && !n.full(), "one partial sync serves both");
        s.succeeded(S, false);
        assertFalse(s.next(2 * S).now(), "nothing pending: nothing to do");
    }

    @Test
    void aFullSyncEverySyncPeriodEvenWithoutChanges() {
        SyncSchedule s = new SyncSchedule(Duration.ofSeconds(1), Duration.ofSeconds(30));
        s.next(0);
        s.succeeded(0, true);
        SyncSchedule.Next idle = s.next(10 * S);
        assertEquals(20 * S, idle.waitNanos(), "sleeps until the periodic sync");
        SyncSchedule.Next n = s.next(30 * S);
        assertTrue(n.now() && n.full());
    }

    @Test
    void failuresBackOffDoublingUpTo30Seconds() {
        SyncSchedule s = new SyncSchedule(Duration.ofSeconds(1), Duration.ofMinutes(30));
        long t = 0;
        s.next(t);
        long[] waits = new long[8];
        for (int i = 0; i < waits.length; i++) {
            s.failed(false);
            SyncSchedule.Next n = s.next(t);
            waits[i] = n.waitNanos() / S;
            t += n.waitNanos();
            SyncSchedule.Next retry = s.next(t);
            assertTrue(retry.now() && retry.full(), "a failed sync is retried as a full one");
        }
        assertEquals("[1, 2, 4, 8, 16, 30, 30, 30]", Arrays.toString(waits));
        s.succeeded(t, true);
        assertEquals(S, s.backoffNanos(), "a success resets the backoff");
    }

    @Test
    void aRepairRequestedDuringASyncIsTheNextSyncAndRebuilds() {
        SyncSchedule s = new SyncSchedule(Duration.ZERO, Duration.ofHours(1));
        SyncSchedule.Next first = s.next(0);
        assertTrue(first.now() && !first.rebuild());
        assertTrue(s.requestRepair(), "drift is news once");
        assertFalse(s.requestRepair(), "more events of it are not");
        s.succeeded(S, true); // the sync that was running when the drift was seen
        SyncSchedule.Next repair = s.next(S);
        assertTrue(repair.now() && repair.full() && repair.rebuild());
        s.failed(true);
        SyncSchedule.Next again = s.next(S + S / 10);
        assertTrue(again.now() && again.rebuild(), "a failed repair is still owed");
    }
}
