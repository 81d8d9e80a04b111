package io.nftproxy.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Transaction;

class LongestCommitsTest {
    private static Transaction elements(String set, int n) {
        List<SetElement> els = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            els.add(SetElement.of(Bytes.be32(i)));
        }
        return new Transaction().add(new Elements(Family.IP, "t", set, els));
    }

    @Test
    void keepsTheLongestWithWhatTheyHeld() {
        LongestCommits c = new LongestCommits(2);
        c.add(elements("small", 3), 1_000_000);
        c.add(elements("hairpin", 4096), 41_000_000);
        c.add(elements("other", 10), 2_000_000);
        c.add(elements("hairpin", 2), 500_000);
        assertEquals(4, c.count());
        assertEquals(41_000_000, c.maxNanos());
        assertEquals("41 ms: 4096 × add elements of hairpin; 2 ms: 10 × add elements of other", c.describe());
    }

    @Test
    void groupsBySetAndKindLargestFirst() {
        Transaction tx = elements("a", 2);
        tx.add(new Elements(Family.IP, "t", "b", List.of(SetElement.of(Bytes.be32(1)))));
        tx.add(new Elements(Family.IP, "t", "a", List.of(SetElement.of(Bytes.be32(9)))));
        tx.add(new Chain(Family.IP, "t", "c1", null, null)).add(new Chain(Family.IP, "t", "c2", null, null));
        tx.destroy(new Elements(Family.IP, "t", "a", List.of(SetElement.of(Bytes.be32(9)))));
        assertEquals("3 × add elements of a, 2 × add chain, 1 × add elements of b, and 1 more kinds", LongestCommits.summary(tx));
    }
}
