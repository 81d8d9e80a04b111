package io.nftproxy.netlink.nft;

import static io.nftproxy.netlink.nft.NfTablesUapi.NFT_REG_1;
import static io.nftproxy.netlink.nft.NfTablesUapi.NFT_REG_2;
import static io.nftproxy.netlink.nft.NfTablesUapi.NFT_REG_VERDICT;

import java.util.ArrayList;
import java.util.List;

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

/**
 * A ruleset that uses every object type and expression the library models, in the three
 * families, shaped like what a service proxy writes.
 */
public final class Fixture {
    public static final String T = "nftp";
    public static final int R9 = 9;   // NFT_REG32_01
    public static final int R10 = 10; // NFT_REG32_02

    public final Table ip = new Table(Family.IP, T);
    public final Table ip6 = new Table(Family.IP6, T);
    public final Table inet = new Table(Family.INET, T);

    public final NftSet svcIps = NftSet.set(Family.IP, T, "svc-ips", DataType.IPV4_ADDR).withComment("cluster IPs");
    public final NftSet services = NftSet.map(Family.IP, T, "services", DataType.VERDICT,
            DataType.IPV4_ADDR, DataType.INET_PROTO, DataType.INET_SERVICE);
    public final NftSet cidrs = NftSet.set(Family.IP, T, "cluster-cidrs", DataType.IPV4_ADDR).withFlags(NfTablesUapi.NFT_SET_INTERVAL);
    public final NftSet affinity = NftSet.set(Family.IP, T, "affinity-a", DataType.IPV4_ADDR)
            .withFlags(NfTablesUapi.NFT_SET_EVAL).withTimeout(10_800_000).withSize(1 << 20);
    public final NftSet endpoints = NftSet.map(Family.IP, T, "endpoints", DataType.IPV4_ADDR, DataType.INET_SERVICE);
    public final NftSet marks = NftSet.map(Family.IP, T, "marks", DataType.MARK, DataType.IPV4_ADDR);
    public final NftSet v6svc = NftSet.map(Family.IP6, T, "services6", DataType.VERDICT,
            DataType.IPV6_ADDR, DataType.INET_PROTO, DataType.INET_SERVICE);

    public static Bytes key(Bytes... parts) {
        List<Bytes> padded = new ArrayList<>();
        for (Bytes p : parts) {
            padded.add(p.padTo4());
        }
        return Bytes.concat(padded.toArray(new Bytes[0]));
    }

    public static List<Expr> x(Expr... e) {
        return List.of(e);
    }

    public Rule rule(Family f, String chain, Expr... e) {
        return Rule.of(f, T, chain, List.of(e));
    }

    public Transaction transaction() {
        Transaction tx = new Transaction();
        tx.add(ip).add(ip6).add(inet);
        // chains
        tx.add(Chain.base(Family.IP, T, "prerouting", "nat", Hook.PREROUTING, -100));
        tx.add(Chain.base(Family.IP, T, "output", "nat", Hook.OUTPUT, -100));
        tx.add(Chain.base(Family.IP, T, "postrouting", "nat", Hook.POSTROUTING, 100));
        tx.add(new Chain(Family.IP, T, "filter-input", new Chain.Base("filter", Hook.INPUT, 0, Verdict.ACCEPT),
                "accepts by default"));
        tx.add(new Chain(Family.IP, T, "forward-drop", new Chain.Base("filter", Hook.FORWARD, 10, Verdict.DROP), null));
        for (String c : List.of("svc-default/web/tcp/http", "ep-10.1.0.5", "ep-10.1.0.6", "mark-for-masquerade",
                "no-endpoints", "affinity-check", "flow-hashes")) {
            tx.add(Chain.regular(Family.IP, T, c));
        }
        // sets and elements
        tx.add(svcIps).add(services).add(cidrs).add(affinity).add(endpoints).add(marks);
        tx.add(Elements.of(svcIps, List.of(SetElement.of(Bytes.ip("10.96.0.1")), SetElement.of(Bytes.ip("10.96.0.10")))));
        tx.add(Elements.of(services, List.of(
                SetElement.of(key(Bytes.ip("10.96.0.10"), Bytes.u8(6), Bytes.be16(80)),
                        Verdict.goTo("svc-default/web/tcp/http")),
                SetElement.of(key(Bytes.ip("10.96.0.11"), Bytes.u8(17), Bytes.be16(53)), Verdict.jump("no-endpoints")),
                SetElement.of(key(Bytes.ip("10.96.0.12"), Bytes.u8(132), Bytes.be16(3868)), Verdict.DROP))));
        tx.add(Elements.of(cidrs, List.of(SetElement.of(Bytes.ip("10.0.0.0")),
                new SetElement(Bytes.ip("11.0.0.0"), null, null, 0, 0, NfTablesUapi.NFT_SET_ELEM_INTERVAL_END))));
        tx.add(Elements.of(affinity, List.of(SetElement.of(Bytes.ip("192.168.7.7")).withTimeout(60_000))));
        tx.add(Elements.of(endpoints, List.of(SetElement.of(Bytes.be16(80), Data.value(Bytes.ip("10.1.0.5"))),
                SetElement.of(Bytes.be16(443), Data.value(Bytes.ip("10.1.0.6"))))));
        tx.add(Elements.of(marks, List.of(SetElement.of(Bytes.ip("10.1.0.5"), Data.value(Bytes.host32(0x4000))))));

        // rules: the service dispatch
        tx.add(rule(Family.IP, "prerouting",
                Payload.network(NFT_REG_1, 16, 4), Meta.load(Meta.NFT_META_L4PROTO, R9), Payload.transport(R10, 2, 2),
                Lookup.map("services", NFT_REG_1, NFT_REG_VERDICT)));
        tx.add(rule(Family.IP, "prerouting",
                Fib.daddrType(NFT_REG_1), Cmp.eq(NFT_REG_1, Bytes.host32(Fib.RTN_LOCAL)), Counter.zero(),
                Immediate.verdict(Verdict.jump("no-endpoints"))).withComment("node ports"));
        tx.add(rule(Family.IP, "output",
                Payload.network(NFT_REG_1, 16, 4), Lookup.member("svc-ips", NFT_REG_1),
                Immediate.verdict(Verdict.jump("svc-default/web/tcp/http"))));
        // random endpoint choice: numgen cascade
        tx.add(rule(Family.IP, "svc-default/web/tcp/http",
                Payload.network(NFT_REG_1, 12, 4), Lookup.member("cluster-cidrs", NFT_REG_1).withInvert(),
                Immediate.verdict(Verdict.jump("mark-for-masquerade"))));
        tx.add(rule(Family.IP, "svc-default/web/tcp/http",
                Numgen.random(NFT_REG_1, 2), Byteorder.hton32(NFT_REG_1), new Cmp(NFT_REG_1, Cmp.Op.LT, Bytes.be32(1)),
                Immediate.verdict(Verdict.goTo("ep-10.1.0.5"))));
        tx.add(rule(Family.IP, "svc-default/web/tcp/http", Immediate.verdict(Verdict.goTo("ep-10.1.0.6"))));
        for (String ep : List.of("10.1.0.5", "10.1.0.6")) {
            tx.add(rule(Family.IP, "ep-" + ep,
                    Payload.network(NFT_REG_1, 12, 4), Cmp.eq(NFT_REG_1, Bytes.ip(ep)),
                    Immediate.verdict(Verdict.jump("mark-for-masquerade"))));
            tx.add(rule(Family.IP, "ep-" + ep,
                    Meta.load(Meta.NFT_META_L4PROTO, NFT_REG_1), Cmp.eq(NFT_REG_1, Bytes.u8(6)),
                    Immediate.value(NFT_REG_1, Bytes.ip(ep)), Immediate.value(NFT_REG_2, Bytes.be16(8080)),
                    Nat.dnat(Family.IP.code(), NFT_REG_1, NFT_REG_2)));
        }
        // hashes: Jenkins' of a concatenation (the same on every machine for a seed), and the flow's symmetric one
        tx.add(rule(Family.IP, "flow-hashes",
                Payload.network(NFT_REG_2, 12, 4), Payload.transport(13, 0, 2),
                Hash.jenkins(NFT_REG_2, 8, NFT_REG_1, 1009, 0xabc), Meta.store(Meta.NFT_META_MARK, NFT_REG_1)));
        tx.add(rule(Family.IP, "flow-hashes",
                Hash.symmetric(NFT_REG_1, 2).withOffset(100), Meta.store(Meta.NFT_META_MARK, NFT_REG_1)));
        // masquerade marking and postrouting
        tx.add(rule(Family.IP, "mark-for-masquerade",
                Meta.load(Meta.NFT_META_MARK, NFT_REG_1),
                new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(~0x4000), Bytes.host32(0x4000)),
                Meta.store(Meta.NFT_META_MARK, NFT_REG_1)));
        tx.add(rule(Family.IP, "postrouting",
                Meta.load(Meta.NFT_META_MARK, NFT_REG_1),
                new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(0x4000), Bytes.host32(0)),
                Cmp.eq(NFT_REG_1, Bytes.host32(0)), Immediate.verdict(Verdict.RETURN)));
        tx.add(rule(Family.IP, "postrouting",
                Meta.load(Meta.NFT_META_MARK, NFT_REG_1),
                new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(0xffffffff), Bytes.host32(0x4000)),
                Meta.store(Meta.NFT_META_MARK, NFT_REG_1)));
        tx.add(rule(Family.IP, "postrouting", Masq.fullyRandom()));
        // data map feeding DNAT, and a mark map
        tx.add(rule(Family.IP, "prerouting",
                Payload.network(NFT_REG_1, 16, 4), Cmp.eq(NFT_REG_1, Bytes.ip("10.96.0.20")),
                Payload.transport(NFT_REG_1, 2, 2), Lookup.map("endpoints", NFT_REG_1, NFT_REG_1),
                new Nat(Nat.NFT_NAT_DNAT, Family.IP.code(), NFT_REG_1, 0, 0, 0, Nat.NF_NAT_RANGE_MAP_IPS)));
        tx.add(rule(Family.IP, "filter-input",
                Payload.network(NFT_REG_1, 12, 4), Lookup.map("marks", NFT_REG_1, NFT_REG_1),
                Meta.store(Meta.NFT_META_MARK, NFT_REG_1)));
        // no endpoints: reject
        tx.add(rule(Family.IP, "no-endpoints",
                Meta.load(Meta.NFT_META_L4PROTO, NFT_REG_1), Cmp.eq(NFT_REG_1, Bytes.u8(6)), Reject.tcpReset()));
        tx.add(rule(Family.IP, "no-endpoints", new Reject(Reject.NFT_REJECT_ICMP_UNREACH, Reject.ICMP_PORT_UNREACH)));
        // session affinity and conntrack
        tx.add(rule(Family.IP, "affinity-check",
                Payload.network(NFT_REG_1, 12, 4),
                new Dynset("affinity-a", Dynset.NFT_DYNSET_OP_UPDATE, NFT_REG_1, 0, 10_800_000)));
        tx.add(rule(Family.IP, "filter-input",
                Ct.load(Ct.NFT_CT_STATE, NFT_REG_1),
                new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(Ct.STATE_ESTABLISHED | Ct.STATE_RELATED), Bytes.host32(0)),
                new Cmp(NFT_REG_1, Cmp.Op.NEQ, Bytes.host32(0)), Immediate.verdict(Verdict.ACCEPT)));
        tx.add(rule(Family.IP, "filter-input",
                Ct.load(Ct.NFT_CT_STATUS, NFT_REG_1),
                new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(Ct.STATUS_DNAT), Bytes.host32(0)),
                new Cmp(NFT_REG_1, Cmp.Op.NEQ, Bytes.host32(0)), Immediate.verdict(Verdict.ACCEPT)));

        // IPv6: a verdict map, DNAT with port, ICMPv6 reject
        tx.add(Chain.base(Family.IP6, T, "prerouting", "nat", Hook.PREROUTING, -100));
        tx.add(Chain.regular(Family.IP6, T, "ep-fd00--5"));
        tx.add(Chain.regular(Family.IP6, T, "reject6"));
        tx.add(v6svc);
        tx.add(Elements.of(v6svc, List.of(SetElement.of(key(Bytes.ip("fd00:96::10"), Bytes.u8(6), Bytes.be16(80)),
                Verdict.goTo("ep-fd00--5")))));
        tx.add(rule(Family.IP6, "prerouting",
                Payload.network(NFT_REG_1, 24, 16), Meta.load(Meta.NFT_META_L4PROTO, NFT_REG_2), Payload.transport(13, 2, 2),
                Lookup.map("services6", NFT_REG_1, NFT_REG_VERDICT)));
        tx.add(rule(Family.IP6, "ep-fd00--5",
                Meta.load(Meta.NFT_META_L4PROTO, NFT_REG_1), Cmp.eq(NFT_REG_1, Bytes.u8(6)),
                Immediate.value(NFT_REG_1, Bytes.ip("fd00::5")), Immediate.value(NFT_REG_2, Bytes.be16(8080)),
                Nat.dnat(Family.IP6.code(), NFT_REG_1, NFT_REG_2)));
        tx.add(rule(Family.IP6, "reject6", new Reject(Reject.NFT_REJECT_ICMP_UNREACH, Reject.ICMPV6_PORT_UNREACH)));

        // inet: family-neutral reject and a v4 DNAT guarded by nfproto
        tx.add(Chain.base(Family.INET, T, "input", "filter", Hook.INPUT, 0));
        tx.add(Chain.base(Family.INET, T, "prerouting", "nat", Hook.PREROUTING, -100));
        tx.add(rule(Family.INET, "input",
                Meta.load(Meta.NFT_META_L4PROTO, NFT_REG_1), Cmp.eq(NFT_REG_1, Bytes.u8(6)),
                Payload.transport(NFT_REG_1, 2, 2), Cmp.eq(NFT_REG_1, Bytes.be16(9)),
                Reject.icmpx(Reject.NFT_REJECT_ICMPX_PORT_UNREACH)));
        tx.add(rule(Family.INET, "prerouting",
                Meta.load(Meta.NFT_META_NFPROTO, NFT_REG_1), Cmp.eq(NFT_REG_1, Bytes.u8(2)),
                Payload.network(NFT_REG_1, 16, 4), Cmp.eq(NFT_REG_1, Bytes.ip("10.96.0.30")),
                Immediate.value(NFT_REG_1, Bytes.ip("10.1.0.7")),
                Nat.dnat(Family.IP.code(), NFT_REG_1, 0)));
        return tx;
    }
}
