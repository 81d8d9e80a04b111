package io.nftproxy.netlink.nft.monitor;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftEvent;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.client.NftClient;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.testkit.TestNetns;

/** Changes made by another process reach us as decoded events. */
class MonitorKernelTest {
    private static List<NftEvent> collectUntil(NftMonitor m, Predicate<NftEvent> last)
            throws NftException {
        List<NftEvent> seen = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline) {
            NftEvent e = m.next(Duration.ofMillis(500));
            if (e != null) {
                seen.add(e);
                if (last.test(e)) {
                    return seen;
                }
            }
        }
        throw new AssertionError("the expected event did not arrive; saw " + seen);
    }

    @Test
    void eventsOfChangesByNft() throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-mon"); NftMonitor m = NftMonitor.open(ns.ns())) {
            ns.nft("""
                    table ip watched {
                      set s {
                        type ipv4_addr
                        elements = { 10.0.0.1 }
                      }
                      chain c {
                        ip daddr @s accept
                      }
                    }
                    """);
            List<NftEvent> seen = collectUntil(m, e -> e.type() == NftEvent.Type.GENERATION);
            assertTrue(seen.stream().anyMatch(e -> e.type() == NftEvent.Type.TABLE && !e.deleted()
                    && e.object().equals(new Table(Family.IP, "watched"))), seen.toString());
            assertTrue(seen.stream().anyMatch(e -> e.type() == NftEvent.Type.CHAIN && "c".equals(e.name())), seen.toString());
            assertTrue(seen.stream().anyMatch(e -> e.type() == NftEvent.Type.SET && "s".equals(e.name())), seen.toString());
            NftEvent elements = seen.stream().filter(e -> e.type() == NftEvent.Type.ELEMENTS).findFirst().orElse(null);
            assertNotNull(elements, seen.toString());
            assertEquals(List.of(SetElement.of(Bytes.ip("10.0.0.1"))), ((Elements) elements.object()).elements());
            NftEvent rule = seen.stream().filter(e -> e.type() == NftEvent.Type.RULE).findFirst().orElseThrow();
            assertEquals("c", ((Rule) rule.object()).chain());
            assertEquals(Immediate.verdict(Verdict.ACCEPT), ((Rule) rule.object()).exprs().get(2));

            ns.nft("delete table ip watched");
            List<NftEvent> del = collectUntil(m, e -> e.type() == NftEvent.Type.TABLE && e.deleted());
            assertEquals("watched", del.get(del.size() - 1).table());
        }
    }

    @Test
    void ourOwnCommitsAreSeenByAnotherSubscriber() throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-mon2"); NftMonitor m = NftMonitor.open(ns.ns());
             NftClient c = NftClient.open(ns.ns())) {
            long before = c.generation();
            c.commit(new Transaction().add(new Table(Family.INET, "mine")).add(Chain.regular(Family.INET, "mine", "x")));
            List<NftEvent> seen = collectUntil(m, e -> e.type() == NftEvent.Type.GENERATION);
            assertEquals(before + 1, seen.get(seen.size() - 1).generation());
            assertTrue(seen.stream().anyMatch(e -> e.type() == NftEvent.Type.CHAIN && e.family() == Family.INET
                    && "x".equals(e.name())), seen.toString());
        }
    }

    /**
     * A large commit by another process (thousands of elements and rules in one transaction)
     * arrives whole: every element and rule as an event, none lost to a receive buffer too small
     * for the kernel's datagrams (a truncated one would be an error).
     */
    @Test
    void aLargeCommitArrivesWhole() throws Exception {
        int elements = 5_000;
        int rules = 500;
        StringBuilder script = new StringBuilder("table ip big {\n  set s {\n    type ipv4_addr\n    elements = { ");
        for (int i = 0; i < elements; i++) {
            script.append(i == 0 ? "" : ", ").append("10.").append(i >> 16 & 255).append('.').append(i >> 8 & 255).append('.')
                    .append(i & 255);
        }
        script.append(" }\n  }\n  chain c {\n");
        for (int i = 0; i < rules; i++) {
            script.append("    ip daddr 192.168.").append(i >> 8).append('.').append(i & 255).append(" counter accept comment \"rule ")
                    .append(i).append("\"\n");
        }
        script.append("  }\n}\n");
        try (TestNetns ns = TestNetns.create("nftp-mon3"); NftMonitor m = NftMonitor.open(ns.ns())) {
            ns.nft(script.toString());
            List<NftEvent> seen = collectUntil(m, e -> e.type() == NftEvent.Type.GENERATION);
            assertEquals(elements, seen.stream().filter(e -> e.type() == NftEvent.Type.ELEMENTS)
                    .mapToInt(e -> ((Elements) e.object()).elements().size()).sum());
            assertEquals(rules, seen.stream().filter(e -> e.type() == NftEvent.Type.RULE).count());
        }
    }
}
