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

        @Override
        public SyncResult sync(ProxyState state, Set<ServicePortName> changed) throws Exception {
            entered.countDown();
            hold.await();
            calls.add(changed == null ? "full" : "partial");
            return new SyncResult(changed == null, CommitStats.EMPTY, 0, 0, 0, 0, List.of(), 0);
        }

        @Override
        public boolean needsFull() {
            return false;
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
}
