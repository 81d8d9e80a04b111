package io.nftproxy.netlink.nft.client;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.CountedElement;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Hook;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.Verdict;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.expr.Cmp;
import io.nftproxy.netlink.nft.expr.Lookup;
import io.nftproxy.netlink.nft.expr.Payload;
import io.nftproxy.testkit.Json;
import io.nftproxy.testkit.TestNetns;

/**
 * Sets declared with a counter: every element counts the packets whose lookup matched it, and
 * one dump reads the counts, or a request by keys. What we read is compared with what
 * {@code nft -j} reads.
 */
class ElementCounterKernelTest {
    private static final String T = "cnt";

    @Test
    void elementsCountTheirMatchesAndOneDumpReadsThem() throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-cnt"); NftClient c = NftClient.open(ns.ns())) {
            NftSet hits = NftSet.set(Family.IP, T, "hits", DataType.IPV4_ADDR).withCounter(true);
            NftSet vmap = NftSet.map(Family.IP, T, "vm", DataType.VERDICT, DataType.IPV4_ADDR).withCounter(true);
            Transaction tx = new Transaction().add(new Table(Family.IP, T)).add(hits).add(vmap)
                    .add(Chain.base(Family.IP, T, "out", "filter", Hook.OUTPUT, 0))
                    .add(new Elements(Family.IP, T, "hits", List.of(SetElement.of(Bytes.ip("127.0.0.1")),
                            SetElement.of(Bytes.ip("127.0.0.2")))))
                    .add(new Elements(Family.IP, T, "vm", List.of(SetElement.of(Bytes.ip("127.0.0.3"), Verdict.ACCEPT))))
                    .add(Rule.of(Family.IP, T, "out", List.of(udp(), udp2(), Payload.network(NfTablesUapi.NFT_REG_1, 16, 4),
                            Lookup.member("hits", NfTablesUapi.NFT_REG_1))))
                    .add(Rule.of(Family.IP, T, "out", List.of(udp(), udp2(), Payload.network(NfTablesUapi.NFT_REG_1, 16, 4),
                            Lookup.map("vm", NfTablesUapi.NFT_REG_1, NfTablesUapi.NFT_REG_VERDICT))));
            c.commit(tx);
            assertTrue(c.listSets(Family.IP, T).stream().allMatch(NftSet::counter), "the sets read back with their counter");

            // Datagrams from bash (no ping needed); the port-unreachable answers are ICMP, not counted.
            ns.exec("bash", "-c", "for i in 1 2 3; do echo x > /dev/udp/127.0.0.1/9; done; "
                    + "for i in 1 2; do echo y > /dev/udp/127.0.0.3/9; done; true");

            Map<String, long[]> ours = new HashMap<>();
            for (String set : List.of("hits", "vm")) {
                for (CountedElement e : c.countedElements(Family.IP, T, set)) {
                    ours.put(Inet.format(InetAddress.getByAddress(e.key().toArray())), new long[] {e.packets(), e.bytes()});
                }
            }
            assertEquals(3, ours.get("127.0.0.1")[0], "three datagrams");
            assertEquals(0, ours.get("127.0.0.2")[0], "an element nothing matched");
            assertEquals(2, ours.get("127.0.0.3")[0], "a verdict map's element counts too");

            // Asked by key instead of dumped: the same counts, in the order asked.
            List<CountedElement> byKey = c.countedElements(Family.IP, T, "hits", List.of(Bytes.ip("127.0.0.2"), Bytes.ip("127.0.0.1")));
            assertEquals(List.of(0L, 3L), byKey.stream().map(CountedElement::packets).toList());
            assertEquals(Bytes.ip("127.0.0.1"), byKey.get(1).key());
            assertEquals(2, c.countedElements(Family.IP, T, "vm", List.of(Bytes.ip("127.0.0.3"))).get(0).packets());
            // A key the set does not hold (a sync took it out since the keys were taken) is left
            // out, and the keys after it are still read: the kernel stops a request at it.
            assertEquals(List.of(Bytes.ip("127.0.0.2"), Bytes.ip("127.0.0.1")), c.countedElements(Family.IP, T, "hits",
                    List.of(Bytes.ip("127.0.0.9"), Bytes.ip("127.0.0.2"), Bytes.ip("127.0.0.8"), Bytes.ip("127.0.0.1"),
                            Bytes.ip("127.0.0.7"))).stream().map(CountedElement::key).toList());
            assertEquals(List.of(), c.countedElements(Family.IP, T, "hits", List.of(Bytes.ip("127.0.0.9"))));
            NftException noSet = assertThrows(NftException.class,
                    () -> c.countedElements(Family.IP, T, "nothing", List.of(Bytes.ip("127.0.0.1"))));
            assertTrue(noSet.isNotFound(), "a set that does not exist is an error: " + noSet.getMessage());

            Map<String, long[]> nft = new HashMap<>();
            nftCounts(ns.exec("nft", "-j", "list", "set", "ip", T, "hits"), nft);
            nftCounts(ns.exec("nft", "-j", "list", "map", "ip", T, "vm"), nft);
            assertEquals(nft.keySet(), ours.keySet());
            nft.forEach((ip, v) -> assertEquals(List.of(v[0], v[1]), List.of(ours.get(ip)[0], ours.get(ip)[1]),
                    "packets and bytes of " + ip + " as nft reads them"));
        }
    }

    @Test
    void keysAskedAcrossManyRequestsSkipThoseTheSetDoesNotHold() throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-cntk"); NftClient c = NftClient.open(ns.ns())) {
            List<SetElement> held = new ArrayList<>();
            List<Bytes> asked = new ArrayList<>();
            List<Bytes> expected = new ArrayList<>();
            for (int i = 0; i < 1600; i++) {
                Bytes k = Bytes.ip("10.1." + (i / 250) + "." + (i % 250));
                asked.add(k);
                if (i % 16 != 5 && i != 511 && i != 512) { // missing ones inside and at the edges of a request
                    held.add(SetElement.of(k));
                    expected.add(k);
                }
            }
            c.commit(new Transaction().add(new Table(Family.IP, T))
                    .add(NftSet.set(Family.IP, T, "many", DataType.IPV4_ADDR).withCounter(true))
                    .add(new Elements(Family.IP, T, "many", held)));
            assertEquals(expected, c.countedElements(Family.IP, T, "many", asked).stream().map(CountedElement::key).toList());
        }
    }

    /** UDP only: {@code ip protocol udp}. */
    private static Payload udp() {
        return Payload.network(NfTablesUapi.NFT_REG_1, 9, 1);
    }

    private static Cmp udp2() {
        return Cmp.eq(NfTablesUapi.NFT_REG_1, Bytes.u8(17));
    }

    /** Collects "address -> {packets, bytes}" from {@code nft -j list set}'s element objects. */
    @SuppressWarnings("unchecked")
    private static void nftCounts(String json, Map<String, long[]> out) {
        Map<String, Object> root = (Map<String, Object>) Json.parse(json);
        for (Object o : (List<Object>) root.get("nftables")) {
            Map<String, Object> set = (Map<String, Object>) ((Map<String, Object>) o).get("set");
            if (set == null) {
                set = (Map<String, Object>) ((Map<String, Object>) o).get("map");
            }
            if (set == null || set.get("elem") == null) {
                continue;
            }
            for (Object e : (List<Object>) set.get("elem")) {
                // A set's entry is {"elem": {val, counter}}; a map's is [that, data].
                Object entry = e instanceof List<?> pair ? pair.get(0) : e;
                Map<String, Object> elem = (Map<String, Object>) ((Map<String, Object>) entry).get("elem");
                Object val = elem.get("val");
                Map<String, Object> counter = (Map<String, Object>) elem.get("counter");
                out.put((String) val, new long[] {((Number) counter.get("packets")).longValue(),
                        ((Number) counter.get("bytes")).longValue()});
            }
        }
    }
}
