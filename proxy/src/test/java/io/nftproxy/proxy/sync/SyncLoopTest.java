package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.source.ObjectStore;

/** The sync loop's bookkeeping of requests, against a backend that records what it was asked. */
class SyncLoopTest {
    /** A backend whose syncs the test can hold, and which records full syncs and forgotten state. */
    static final class Recording implements Backend {
        final LinkedBlockingQueue<String> calls = new LinkedBlockingQueue<>();
        final AtomicInteger forgotten = new AtomicInteger();
        volatile CountDownLatch hold = new CountDownLatch(0);
        volatile CountDownLatch entered = new CountDownLatch(1);
        /** Syncs still to fail, as a kernel refusing the whole transaction. */
        final AtomicInteger failing = new AtomicInteger();

        @Override
        public SyncResult sync(ProxyState state, Set<ServicePortName> changed) throws Exception {
            entered.countDown();
            hold.await();
            if (failing.getAndDecrement() > 0) {
                calls.add("failed " + (changed == null ? "full" : "partial"));
                throw new IllegalStateException("operation 0 of 9 failed: No such file or directory");
            }
            calls.add(changed == null ? "full" : "partial");
            return new SyncResult(changed == null, CommitStats.EMPTY, 0, 0, 0, 0, List.of(), 0);
        }

        /** Nothing committed yet (a first sync) or forgotten (a rebuild). */
        volatile boolean needsFull;

        @Override
        public boolean needsFull() {
            return needsFull;
        }

        @Override
        public void forgetCommitted() {
            forgotten.incrementAndGet();
        }
    }

    @Test
    void aRepairRequestedWhileASyncRunsIsServedAfterIt() throws Exception {
        Recording backend = new Recording();
        LinkedBlockingQueue<String> events = new LinkedBlockingQueue<>();
        SyncListener listener = new SyncListener() {
            @Override
            public void repaired() {
                events.add("repaired");
            }
        };
        try (SyncLoop loop = new SyncLoop(new ObjectStore("node-a"), backend, Duration.ZERO, Duration.ofHours(1), listener)) {
            backend.hold = new CountDownLatch(1);
            loop.start();
            assertTrue(backend.entered.await(10, TimeUnit.SECONDS), "the first sync starts");
            loop.requestRepair(); // drift seen while the first sync is still committing
            backend.hold.countDown();
            assertEquals("full", backend.calls.poll(10, TimeUnit.SECONDS), "the first sync");
            assertEquals("full", backend.calls.poll(10, TimeUnit.SECONDS),
                    "the repair follows at once, not at the next periodic sync an hour later");
            assertNotNull(events.poll(10, TimeUnit.SECONDS));
            assertEquals(1, backend.forgotten.get(), "the repair rebuilds from nothing");
        }
    }

    @Test
    void aFailedSyncIsRetriedAsARebuildAfterABackoffAndReported() throws Exception {
        Recording backend = new Recording();
        backend.failing.set(2);
        LinkedBlockingQueue<String> events = new LinkedBlockingQueue<>();
        SyncListener listener = new SyncListener() {
            @Override
            public void failed(boolean full, Exception error) {
                events.add("failed: " + error.getMessage());
            }

            @Override
            public void synced(SyncResult r, long nanos, ObjectStore.Snapshot snap) {
                events.add("synced");
            }
        };
        try (SyncLoop loop = new SyncLoop(new ObjectStore("node-a"), backend, Duration.ZERO, Duration.ofHours(1), listener)) {
            loop.start();
            assertEquals("failed full", backend.calls.poll(10, TimeUnit.SECONDS));
            assertEquals("failed full", backend.calls.poll(10, TimeUnit.SECONDS), "retried, as a full sync");
            assertEquals("full", backend.calls.poll(10, TimeUnit.SECONDS), "and again until it goes in");
            assertEquals("failed: operation 0 of 9 failed: No such file or directory", events.poll(10, TimeUnit.SECONDS));
            assertEquals("failed: operation 0 of 9 failed: No such file or directory", events.poll(10, TimeUnit.SECONDS));
            assertEquals("synced", events.poll(10, TimeUnit.SECONDS));
            assertEquals(2, backend.forgotten.get(), "after each failure what was committed is forgotten: the retry rebuilds");
        }
    }
}
