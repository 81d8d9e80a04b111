package io.nftproxy.netlink.nft.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.CountedElement;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.testkit.TestNetns;

/**
 * A dump of a hash set spans many messages, and the kernel walks the set again from its start
 * for each, skipping what it sent; if the hash table changes shape between two messages (the
 * kernel's deferred resize after a large addition), the walk's order changes and elements are
 * missed or sent twice, without NLM_F_DUMP_INTR. Read right after the set grew, as a scrape or
 * a takeover may, every element must come back once.
 */
class ElementDumpKernelTest {
    private static final String T = "dump";

    @Test
    void aSetDumpedRightAfterItGrewHoldsEveryElementOnce() throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-dump"); NftClient c = NftClient.open(ns.ns())) {
            String set = "s";
            c.commit(new Transaction().add(new Table(Family.IP, T))
                    .add(NftSet.set(Family.IP, T, set, DataType.IPV4_ADDR).withCounter(true)));
            Set<Bytes> keys = new HashSet<>();
            List<String> wrong = new ArrayList<>();
            // 3,000 more a commit up to 30,000: the table grows past 24,576 elements (three
            // quarters of 32,768 buckets) on the way, where a single dump repeated about a
            // thousand elements and missed as many (three runs of three).
            for (int round = 0; round < 10; round++) {
                List<SetElement> els = new ArrayList<>();
                for (int i = 0; i < 3000; i++) {
                    Bytes k = Bytes.ip("10." + round + "." + (i / 250) + "." + (i % 250));
                    els.add(SetElement.of(k));
                    keys.add(k);
                }
                c.commit(new Transaction().add(new Elements(Family.IP, T, set, els)));
                check(wrong, "round " + round + " by dump", keys,
                        c.countedElements(Family.IP, T, set).stream().map(CountedElement::key).toList());
                check(wrong, "round " + round + " by dump, the count known", keys,
                        c.countedElements(Family.IP, T, set, keys.size()).stream().map(CountedElement::key).toList());
                check(wrong, "round " + round + " listed", keys,
                        c.listElements(Family.IP, T, set).stream().map(SetElement::key).toList());
            }
            assertEquals(List.of(), wrong, "readings that were not what the set holds");
        }
    }

    private static void check(List<String> wrong, String what, Set<Bytes> held, List<Bytes> read) {
        Set<Bytes> distinct = new HashSet<>(read);
        if (read.size() != held.size() || !distinct.equals(held)) {
            wrong.add(what + ": " + read.size() + " read, " + distinct.size() + " distinct, " + held.size() + " held");
        }
    }
}
