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

    /** What a change keeps for connections crossing it goes in a partial sync of its own when its time comes. */
    @Test
    void aSyncWhenTheSyncerHasSomethingToTakeAway() {
        SyncSchedule s = new SyncSchedule(Duration.ofSeconds(1), Duration.ofSeconds(30));
        s.next(0);
        s.succeeded(0, true);
        s.tidyAt(2 * S);
        SyncSchedule.Next idle = s.next(S);
        assertEquals(S, idle.waitNanos(), "sleeps until then, not until the periodic sync");
        SyncSchedule.Next n = s.next(2 * S);
        assertTrue(n.now() && !n.full(), "a partial sync, without changes");
        s.succeeded(2 * S, false);
        assertEquals(28 * S, s.next(2 * S).waitNanos(), "then nothing until the periodic sync");

        // Not sooner than the minimum period after the last sync.
        s.tidyAt(2 * S + S / 2);
        assertEquals(S, s.next(2 * S).waitNanos());
        assertTrue(s.next(3 * S).now());
    }

    /** Tables left under the other generation's names are rebuilt under their own: a full sync, not a repair. */
    @Test
    void ownNamesAreTakenBackByTheNextSync() {
        SyncSchedule s = new SyncSchedule(Duration.ofSeconds(1), Duration.ofSeconds(30));
        s.next(0);
        s.succeeded(0, true);
        s.requestOwnNames();
        assertEquals(S, s.next(0).waitNanos(), "at the pace of every sync");
        SyncSchedule.Next n = s.next(S);
        assertTrue(n.now() && n.full() && n.ownNames() && !n.rebuild());
        s.succeeded(S, true);
        assertFalse(s.next(5 * S).now(), "once");

        // A repair asked for at the same time serves both.
        s.requestOwnNames();
        s.requestRepair();
        SyncSchedule.Next both = s.next(6 * S);
        assertTrue(both.now() && both.rebuild() && !both.ownNames());
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

    @Test
    void aCheckIsAFullSyncWithoutRebuildAtMostOnceEvery30Seconds() {
        SyncSchedule s = new SyncSchedule(Duration.ofSeconds(1), Duration.ofHours(1));
        s.next(0);
        s.succeeded(0, true); // the first full sync
        assertTrue(s.requestCheck(), "a check is news once");
        assertFalse(s.requestCheck(), "more of them are not");
        SyncSchedule.Next wait = s.next(10 * S);
        assertFalse(wait.now());
        assertEquals(20 * S, wait.waitNanos(), "waits until 30 s after the last full sync");
        s.request();
        SyncSchedule.Next partial = s.next(11 * S);
        assertTrue(partial.now() && !partial.full(), "changes meanwhile go as partial syncs");
        s.succeeded(11 * S, false);
        SyncSchedule.Next check = s.next(30 * S);
        assertTrue(check.now() && check.full() && !check.rebuild(), "then a full sync that does not rebuild");
        s.succeeded(30 * S, true);
        SyncSchedule.Next idle = s.next(31 * S);
        assertFalse(idle.now(), "served");
        assertEquals(3600 * S - S, idle.waitNanos(), "the next full sync is the periodic one");

        s.requestCheck(); // a full sync for another reason serves a pending check
        s.request();
        s.failed(false);
        SyncSchedule.Next retry = s.next(40 * S);
        assertTrue(retry.now() && retry.full());
        s.succeeded(40 * S, true);
        assertEquals(3600 * S - S, s.next(41 * S).waitNanos(), "no check left after it");
    }
}
