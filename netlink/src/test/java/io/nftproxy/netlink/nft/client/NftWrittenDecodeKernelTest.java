package io.nftproxy.netlink.nft.client;

import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Fixture;
import io.nftproxy.netlink.nft.Hook;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.client.NftClient;
import static io.nftproxy.netlink.nft.NfTablesUapi.NFT_REG_1;
import static io.nftproxy.netlink.nft.NfTablesUapi.NFT_REG_2;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashSet;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.expr.Bitwise;
import io.nftproxy.netlink.nft.expr.Byteorder;
import io.nftproxy.netlink.nft.expr.Cmp;
import io.nftproxy.netlink.nft.expr.Counter;
import io.nftproxy.netlink.nft.expr.Ct;
import io.nftproxy.netlink.nft.expr.Dynset;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Fib;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.netlink.nft.expr.Lookup;
import io.nftproxy.netlink.nft.expr.Masq;
import io.nftproxy.netlink.nft.expr.Meta;
import io.nftproxy.netlink.nft.expr.Nat;
import io.nftproxy.netlink.nft.expr.Hash;
import io.nftproxy.netlink.nft.expr.Numgen;
import io.nftproxy.netlink.nft.expr.Payload;
import io.nftproxy.netlink.nft.expr.Reject;
import io.nftproxy.testkit.TestNetns;

/** Objects that nft itself wrote are decoded by our reader into exactly the model we expect. */
class NftWrittenDecodeKernelTest {
    private static final String SCRIPT = """
            table ip w {
              set s {
                type ipv4_addr
                elements = { 10.0.0.1, 10.0.0.2 }
              }
              set aff {
                type ipv4_addr
                flags dynamic,timeout
                timeout 3h
              }
              map m {
                type ipv4_addr . inet_proto . inet_service : verdict
                elements = { 10.96.0.1 . tcp . 80 comment "default/web:http" : jump c4, 10.96.0.2 . udp . 53 : drop }
              }
              map dm {
                type inet_service : ipv4_addr
                elements = { 80 : 10.1.0.5 }
              }
              chain c1 {
                type nat hook prerouting priority -100; policy accept;
                ip daddr . meta l4proto . th dport vmap @m
              }
              chain c2 {
                numgen random mod 3 < 1 accept
                meta l4proto tcp dnat to 10.1.0.5:8080
                meta mark set meta mark | 0x4000
                ct state established,related accept
                fib daddr type local counter drop
                ip saddr @s masquerade fully-random
                meta l4proto tcp reject with tcp reset
                update @aff { ip saddr timeout 3h }
                dnat to th dport map @dm
                reject
                meta mark set jhash ip saddr . th sport mod 1009 seed 0xabc
                meta mark set jhash ip saddr mod 7
                meta mark set symhash mod 2 offset 100
              }
              chain c3 {
                type filter hook forward priority 0; policy drop;
              }
              chain c4 {
              }
            }
            """;

    private static Rule r(String chain, Expr... e) {
        return Rule.of(Family.IP, "w", chain, List.of(e));
    }

    @Test
    void decodesWhatNftWrote() throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-dec"); NftClient c = NftClient.open(ns.ns())) {
            ns.nft(SCRIPT);
            TableContents tc = c.readTable(Family.IP, "w");

            assertEquals(new Table(Family.IP, "w"), tc.table());
            assertEquals(List.of(
                    Chain.base(Family.IP, "w", "c1", "nat", Hook.PREROUTING, -100),
                    Chain.regular(Family.IP, "w", "c2"),
                    new Chain(Family.IP, "w", "c3", new Chain.Base("filter", Hook.FORWARD, 0, Verdict.DROP), null),
                    Chain.regular(Family.IP, "w", "c4")),
                    tc.chains());

            NftSet s = NftSet.set(Family.IP, "w", "s", DataType.IPV4_ADDR);
            // A set the kernel writes, declared without a size: the kernel gives it 65,535.
            NftSet aff = NftSet.set(Family.IP, "w", "aff", DataType.IPV4_ADDR).withFlags(NfTablesUapi.NFT_SET_EVAL)
                    .withTimeout(10_800_000).withSize(65_535);
            NftSet m = NftSet.map(Family.IP, "w", "m", DataType.VERDICT, DataType.IPV4_ADDR, DataType.INET_PROTO,
                    DataType.INET_SERVICE);
            NftSet dm = NftSet.map(Family.IP, "w", "dm", DataType.IPV4_ADDR, DataType.INET_SERVICE);
            assertEquals(new HashSet<>(List.of(s, aff, m, dm)), new HashSet<>(tc.sets()));

            assertEquals(new HashSet<>(List.of(SetElement.of(Bytes.ip("10.0.0.1")), SetElement.of(Bytes.ip("10.0.0.2")))),
                    new HashSet<>(tc.elements().get("s")));
            assertEquals(new HashSet<>(List.of(
                    SetElement.of(Fixture.key(Bytes.ip("10.96.0.1"), Bytes.u8(6), Bytes.be16(80)), Verdict.jump("c4"))
                            .withComment("default/web:http"), // nft's element user data: a comment TLV
                    SetElement.of(Fixture.key(Bytes.ip("10.96.0.2"), Bytes.u8(17), Bytes.be16(53)), Verdict.DROP))),
                    new HashSet<>(tc.elements().get("m")));
            assertEquals(List.of(SetElement.of(Bytes.be16(80), Data.value(Bytes.ip("10.1.0.5")))), tc.elements().get("dm"));

            List<Rule> want = List.of(
                    r("c1", Payload.network(NFT_REG_1, 16, 4), Meta.load(Meta.NFT_META_L4PROTO, 9),
                            Payload.transport(10, 2, 2), Lookup.map("m", NFT_REG_1, 0)),
                    r("c2", Numgen.random(NFT_REG_1, 3), Byteorder.hton32(NFT_REG_1),
                            new Cmp(NFT_REG_1, Cmp.Op.LT, Bytes.be32(1)), Immediate.verdict(Verdict.ACCEPT)),
                    r("c2", Meta.load(Meta.NFT_META_L4PROTO, NFT_REG_1), Cmp.eq(NFT_REG_1, Bytes.u8(6)),
                            Immediate.value(NFT_REG_1, Bytes.ip("10.1.0.5")), Immediate.value(NFT_REG_2, Bytes.be16(8080)),
                            Nat.dnat(Family.IP.code(), NFT_REG_1, NFT_REG_2)),
                    r("c2", Meta.load(Meta.NFT_META_MARK, NFT_REG_1),
                            new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(~0x4000), Bytes.host32(0x4000)),
                            Meta.store(Meta.NFT_META_MARK, NFT_REG_1)),
                    r("c2", Ct.load(Ct.NFT_CT_STATE, NFT_REG_1),
                            new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(6), Bytes.host32(0)),
                            new Cmp(NFT_REG_1, Cmp.Op.NEQ, Bytes.host32(0)), Immediate.verdict(Verdict.ACCEPT)),
                    r("c2", Fib.daddrType(NFT_REG_1), Cmp.eq(NFT_REG_1, Bytes.host32(Fib.RTN_LOCAL)), Counter.zero(),
                            Immediate.verdict(Verdict.DROP)),
                    r("c2", Payload.network(NFT_REG_1, 12, 4), Lookup.member("s", NFT_REG_1), Masq.fullyRandom()),
                    r("c2", Meta.load(Meta.NFT_META_L4PROTO, NFT_REG_1), Cmp.eq(NFT_REG_1, Bytes.u8(6)), Reject.tcpReset()),
                    r("c2", Payload.network(NFT_REG_1, 12, 4),
                            new Dynset("aff", Dynset.NFT_DYNSET_OP_UPDATE, NFT_REG_1, 0, 10_800_000)),
                    r("c2", Payload.transport(NFT_REG_1, 2, 2), Lookup.map("dm", NFT_REG_1, NFT_REG_1),
                            new Nat(Nat.NFT_NAT_DNAT, Family.IP.code(), NFT_REG_1, 0, 0, 0, 0)),
                    r("c2", new Reject(Reject.NFT_REJECT_ICMP_UNREACH, Reject.ICMP_PORT_UNREACH)),
                    r("c2", Payload.network(NFT_REG_2, 12, 4), Payload.transport(13, 0, 2),
                            Hash.jenkins(NFT_REG_2, 8, NFT_REG_1, 1009, 0xabc), Meta.store(Meta.NFT_META_MARK, NFT_REG_1)),
                    // No seed given: the kernel draws its own and leaves it out of the dump.
                    r("c2", Payload.network(NFT_REG_2, 12, 4),
                            new Hash(Hash.NFT_HASH_JENKINS, NFT_REG_2, NFT_REG_1, 4, 7, null, 0), Meta.store(Meta.NFT_META_MARK, NFT_REG_1)),
                    r("c2", Hash.symmetric(NFT_REG_1, 2).withOffset(100), Meta.store(Meta.NFT_META_MARK, NFT_REG_1)));
            assertEquals(want, tc.rules().stream().map(RoundTripKernelTest::normalize).toList());
        }
    }
}
