package io.nftproxy.netlink.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.expr.Immediate;

class ModelTest {
    @Test
    void concatenatedTypesRoundTrip() {
        List<DataType> k = List.of(DataType.IPV4_ADDR, DataType.INET_PROTO, DataType.INET_SERVICE);
        assertEquals((7 << 12) | (12 << 6) | 13, DataType.concatId(k));
        assertEquals(12, DataType.keyLength(k));
        assertEquals(k, DataType.split(DataType.concatId(k), 12));
        assertEquals(List.of(DataType.INET_SERVICE), DataType.split(13, 2));
        assertEquals(List.of(DataType.IPV6_ADDR, DataType.INET_PROTO, DataType.INET_SERVICE),
                DataType.split(DataType.concatId(List.of(DataType.IPV6_ADDR, DataType.INET_PROTO, DataType.INET_SERVICE)), 24));
        assertEquals("type63", DataType.split(63, 4).get(0).name(), "unknown types stay opaque");
    }

    @Test
    void addressesParseStrictly() {
        assertEquals("10.0.0.1", Inet.format(Inet.parse("10.0.0.1")));
        assertEquals("fd00::1", Inet.format(Inet.parse("fd00:0:0::1")));
        assertEquals("fd00:1:0:0:1::", Inet.format(Inet.parse("fd00:1:0:0:1:0:0:0")));
        assertEquals("::", Inet.format(Inet.parse("::")));
        assertEquals("0.0.0.0", Inet.format(Inet.parse("0.0.0.0")));
        assertEquals("255.255.255.255", Inet.format(Inet.parse("255.255.255.255")));
        assertEquals("192.168.100.9", Inet.format(Inet.parse("192.168.100.9")));
        for (String bad : List.of("", "10.0.0", "10.0.0.256", "010.0.0.1", "example.com", "1.2.3.4/8", "fd00::g",
                "1.2.3.4.5", "1..2.3", "1.2.3.", ".1.2.3", "1000.1.1.1", " 1.2.3.4", "1.2.3.4 ", "00.1.1.1", "1.2.3.-4")) {
            assertThrows(IllegalArgumentException.class, () -> Inet.parse(bad), bad);
        }
    }

    @Test
    void invalidObjectsAreRefusedWithTheReason() {
        assertEquals("chain name is empty",
                assertThrows(IllegalArgumentException.class, () -> Chain.regular(Family.IP, "t", "")).getMessage());
        assertThrows(IllegalArgumentException.class, () -> Chain.regular(Family.IP, "t", "x".repeat(256)));
        assertThrows(IllegalArgumentException.class, () -> new Verdict(Verdict.Kind.JUMP, null));
        assertThrows(IllegalArgumentException.class, () -> new Op(Op.Verb.REPLACE,
                Rule.of(Family.IP, "t", "c", List.of(Immediate.verdict(Verdict.ACCEPT)))));
        assertThrows(IllegalArgumentException.class, () -> new Op(Op.Verb.DELETE,
                Rule.of(Family.IP, "t", "c", List.of())), "a rule is deleted by handle");
        assertThrows(IllegalArgumentException.class, () -> new Chain.Base("filter", Hook.INPUT, 0, Verdict.RETURN));
        assertEquals(Family.IP6, Family.parse("ip6"));
        assertThrows(IllegalArgumentException.class, () -> Family.parse("ipv5"));
    }

    @Test
    void transactionsPrintAsNftCommands() {
        NftSet s = NftSet.map(Family.IP, "t", "m", DataType.VERDICT, DataType.IPV4_ADDR, DataType.INET_SERVICE);
        Transaction tx = new Transaction()
                .add(new Table(Family.IP, "t"))
                .add(Chain.base(Family.IP, "t", "pre", "nat", Hook.PREROUTING, -100))
                .add(s)
                .add(Elements.of(s, List.of(SetElement.of(Fixture.key(Bytes.ip("10.0.0.1"), Bytes.be16(80)), Verdict.jump("x")))))
                .flush(Chain.regular(Family.IP, "t", "x"))
                .delete(Rule.of(Family.IP, "t", "x", List.of()).withHandle(7))
                .destroy(new Table(Family.IP6, "old"));
        assertEquals("""
                add table ip t
                add chain ip t pre { type nat hook prerouting priority -100; policy accept; }
                add map ip t m { type ipv4_addr . inet_service : verdict; }
                add element ip t m { 10.0.0.1 . 80 : jump x }
                flush chain ip t x
                delete rule ip t x handle 7
                destroy table ip6 old
                """, tx.toString());
    }

    @Test
    void setsOfTheSameNameInTwoFamiliesPrintByTheirOwnTypes() {
        NftSet v4 = NftSet.set(Family.IP, "t", "pairs", DataType.IPV4_ADDR, DataType.IPV4_ADDR);
        NftSet v6 = NftSet.set(Family.IP6, "t", "pairs", DataType.IPV6_ADDR, DataType.IPV6_ADDR);
        Transaction tx = new Transaction()
                .add(v6)
                .add(v4)
                .add(Elements.of(v4, List.of(SetElement.of(Fixture.key(Bytes.ip("10.0.0.1"), Bytes.ip("10.0.0.2"))))))
                .add(Elements.of(v6, List.of(SetElement.of(Fixture.key(Bytes.ip("fd00::1"), Bytes.ip("fd00::2"))))));
        assertEquals("""
                add set ip6 t pairs { type ipv6_addr . ipv6_addr; }
                add set ip t pairs { type ipv4_addr . ipv4_addr; }
                add element ip t pairs { 10.0.0.1 . 10.0.0.2 }
                add element ip6 t pairs { fd00::1 . fd00::2 }
                """, tx.toString());
    }
    @Test
    void elementsOfSetsDeclaredBeforePrintByTheTypesTheCallerKnows() {
        NftSet v4 = NftSet.set(Family.IP, "t", "pairs", DataType.IPV4_ADDR, DataType.INET_SERVICE);
        Transaction tx = new Transaction()
                .add(Elements.of(v4, List.of(SetElement.of(Fixture.key(Bytes.ip("10.0.0.1"), Bytes.be16(80))))))
                .delete(new Elements(Family.IP6, "t", "pairs", List.of(SetElement.of(Bytes.ip("fd00::1")))));
        assertEquals("""
                add element ip t pairs { 10.0.0.1 . 80 }
                delete element ip6 t pairs { 0xfd000000000000000000000000000001 }
                """, tx.toString((family, table, name) -> family == Family.IP && table.equals("t") ? v4 : null),
                "by family and table: the ip6 set of the same name is not known");
        assertEquals("add element ip t pairs { 0x0a00000100500000 }\n", new Transaction().add(Elements.of(v4,
                List.of(SetElement.of(Fixture.key(Bytes.ip("10.0.0.1"), Bytes.be16(80)))))).toString(), "unknown: raw bytes");
    }
}
