package io.nftproxy.netlink.nft.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.testkit.TestNetns;

/**
 * Every commit in a network namespace interrupts every dump in it, of any table: a dump longer
 * than the gaps between another user's commits never ends uninterrupted. A table nobody changes
 * is read all the same (two reads in a row that agree), and nothing is handed out half-read.
 */
class InterruptedDumpKernelTest {
    private static final int CHAINS = 20000;

    @Test
    void aTableNobodyChangesIsListedWhileAnotherUserCommitsWithoutPause() throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-intr"); NftClient ours = NftClient.open(ns.ns());
             NftClient other = NftClient.open(ns.ns())) {
            Transaction tx = new Transaction().add(new Table(Family.IP, "ours"));
            for (int i = 0; i < CHAINS; i++) {
                tx.add(Chain.regular(Family.IP, "ours", "chain-" + i));
            }
            ours.commit(tx);
            NftSet theirs = NftSet.set(Family.IP, "theirs", "s", DataType.INTEGER);
            other.commit(new Transaction().add(new Table(Family.IP, "theirs")).add(theirs));

            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger commits = new AtomicInteger();
            AtomicReference<Exception> failed = new AtomicReference<>();
            Thread neighbour = new Thread(() -> {
                for (int i = 0; !stop.get(); i++) {
                    try {
                        other.commit(new Transaction().add(new Elements(Family.IP, "theirs", "s",
                                List.of(SetElement.of(Bytes.host32(i))))));
                        commits.incrementAndGet();
                    } catch (Exception e) {
                        failed.set(e);
                        return;
                    }
                }
            }, "neighbour");
            neighbour.start();
            try {
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (commits.get() < 100 && System.nanoTime() < deadline && failed.get() == null) {
                    Thread.onSpinWait();
                }
                int before = commits.get();
                for (int read = 0; read < 3; read++) {
                    List<Chain> chains = ours.listChains(Family.IP, "ours");
                    assertEquals(CHAINS, chains.size(), "every chain, once");
                    assertEquals(CHAINS, new HashSet<>(chains.stream().map(Chain::name).toList()).size(), "every chain, once");
                }
                assertTrue(commits.get() - before > 10, "the other user committed while we read: " + (commits.get() - before));
            } finally {
                stop.set(true);
                neighbour.join();
            }
            assertEquals(null, failed.get(), "the other user's commits went in");
        }
    }
}
