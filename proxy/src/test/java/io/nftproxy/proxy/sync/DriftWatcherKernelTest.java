package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.monitor.NftMonitor;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * The drift watcher does not listen while we commit (so the kernel builds no event per element),
 * yet still notices anyone else's commit: made while it listens, or slipped into our window.
 */
class DriftWatcherKernelTest {

    private static void eventually(BooleanSupplier cond, String what) throws Exception {
        Sandbox.eventually(Duration.ofSeconds(10), cond::getAsBoolean, what); // the watcher reports on its own thread
    }

    @Test
    void ourCommitsAreQuietAndForeignOnesAreSeen() throws Exception {
        Kernel.require();
        try (TestNetns ns = TestNetns.create("nftp-drift"); NftClient client = NftClient.open(ns.ns())) {
            AtomicInteger repairs = new AtomicInteger();
            AtomicInteger checks = new AtomicInteger();
            try (DriftWatcher w = new DriftWatcher(ns.ns(), "ours", client.portId(), repairs::incrementAndGet,
                    checks::incrementAndGet)) {
                // Our own commits, many elements' worth of events if we listened: no repair.
                for (int i = 0; i < 5; i++) {
                    Table t = new Table(Family.IP, "ours");
                    w.commitQuietly(client, new Transaction().add(t).flush(t));
                }
                assertEquals(0, repairs.get(), "our own commits are not drift");
                assertEquals(0, checks.get(), "nor do they ask for a check");
                // The kernel sent us nothing for them: events come in commit order, so once a later
                // foreign commit's event is read, any event of ours would have been read before it.
                ns.nft("add table ip marker");
                eventually(() -> "marker".equals(w.lastTable()), "the marker's event");
                assertEquals(1, w.eventsRead(), "only the marker's table event, none of our commits'");
                w.commitQuietly(client, new Transaction().add(new Chain(Family.IP, "ours", "c0", null, null)));
                ns.nft("add table ip marker2");
                eventually(() -> "marker2".equals(w.lastTable()), "the second marker's event");
                assertEquals(2, w.eventsRead(), "none of our chain's events");
                assertEquals(0, repairs.get(), "other tables are not ours");

                // Someone else commits to our table while we listen: seen from the events.
                ns.nft("add chain ip ours intruder");
                eventually(() -> repairs.get() > 0, "a foreign chain is noticed");
                int seen = repairs.get();

                // Someone else commits (to any table) inside our window: seen from the generation id,
                // and checked by a re-assertion, not a rebuild (another user's commits are common).
                w.commitQuietly(client, () -> {
                    var stats = client.commit(new Transaction().add(new Chain(Family.IP, "ours",
                            "ours-new", null, null)));
                    ns.nft("add table ip someone-else");
                    return stats;
                });
                assertEquals(1, checks.get(), "a commit in our window asks for a check");
                assertEquals(seen, repairs.get(), "and not for a rebuild");
            }
        }
    }

    @Test
    void lostEventsAreTreatedAsDrift() throws Exception {
        Kernel.require();
        try (TestNetns ns = TestNetns.create("nftp-lost"); NftClient client = NftClient.open(ns.ns())) {
            AtomicInteger repairs = new AtomicInteger();
            // Subscribed but not yet read: a burst of events about another table, far more than
            // 4 KiB of them, overflows the socket; whatever was lost might have been about us.
            NftMonitor monitor = NftMonitor.open(ns.ns(), 4096);
            StringBuilder sb = new StringBuilder("add table ip theirs\nadd set ip theirs s { type ipv4_addr; }\n"
                    + "add element ip theirs s { ");
            for (int i = 0; i < 3000; i++) {
                sb.append(i == 0 ? "" : ", ").append("10.").append(i / 250).append('.').append(i % 250).append(".1");
            }
            ns.nft(sb.append(" }\n").toString());
            try (DriftWatcher w = new DriftWatcher(monitor, "ours", client.portId(), repairs::incrementAndGet, () -> { })) {
                eventually(() -> repairs.get() > 0, "the overflow asks for a repair");
            }
        }
    }
}
