package io.nftproxy.proxy.render;

import static io.nftproxy.netlink.nft.NfTablesUapi.NFT_REG_1;
import static io.nftproxy.netlink.nft.NfTablesUapi.NFT_REG_2;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Bitwise;
import io.nftproxy.netlink.nft.expr.Byteorder;
import io.nftproxy.netlink.nft.expr.Cmp;
import io.nftproxy.netlink.nft.expr.Ct;
import io.nftproxy.netlink.nft.expr.Dynset;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Fib;
import io.nftproxy.netlink.nft.expr.Hash;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.netlink.nft.expr.Lookup;
import io.nftproxy.netlink.nft.expr.Meta;
import io.nftproxy.netlink.nft.expr.Nat;
import io.nftproxy.netlink.nft.expr.Numgen;
import io.nftproxy.netlink.nft.expr.Payload;
import io.nftproxy.netlink.nft.expr.Reject;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.Protocol;

/**
 * The expression sequences the renderer combines into rules, encoded exactly as nft encodes the
 * same statements (registers included), so {@code nft list} shows what nft itself would write.
 */
final class RuleParts {
    private final IpFamily family;

    RuleParts(IpFamily family) {
        this.family = family;
    }

    /** Register of a 32-bit slot, numbered as nft numbers them (16-byte registers where aligned). */
    static int reg(int slot) {
        return slot % 4 == 0 ? NFT_REG_1 + slot / 4 : NfTablesUapi.NFT_REG32_00 + slot;
    }

    private int saddrOffset() {
        return family == IpFamily.V4 ? 12 : 8;
    }

    private int daddrOffset() {
        return family == IpFamily.V4 ? 16 : 24;
    }

    /** The 32-bit slots an address takes in a register. */
    int addrSlots() {
        return family.addressBytes() / 4;
    }

    Expr loadSaddr(int reg) {
        return Payload.network(reg, saddrOffset(), family.addressBytes());
    }

    Expr loadDaddr(int reg) {
        return Payload.network(reg, daddrOffset(), family.addressBytes());
    }

    /** {@code ip daddr . meta l4proto . th dport} loaded from register 1 on. */
    List<Expr> daddrProtoPort() {
        return daddrProtoPort(0);
    }

    /** {@code ip daddr . meta l4proto . th dport} loaded from 32-bit slot {@code slot} on. */
    List<Expr> daddrProtoPort(int slot) {
        int s = addrSlots();
        return List.of(loadDaddr(reg(slot)), Meta.load(Meta.NFT_META_L4PROTO, reg(slot + s)),
                Payload.transport(reg(slot + s + 1), 2, 2));
    }

    /**
     * {@code ip daddr . meta l4proto . th dport . ip saddr}, the key of an interval set of
     * concatenations. nft follows the protocol's load with a byte-order conversion there (1 byte
     * in units of 2: the kernel converts nothing), as pipapo compares fields in network order;
     * written as nft writes it, so that nft lists the rule as its own.
     */
    List<Expr> daddrProtoPortSaddrForRanges() {
        int s = addrSlots();
        return List.of(loadDaddr(reg(0)), Meta.load(Meta.NFT_META_L4PROTO, reg(s)),
                new Byteorder(reg(s), reg(s), Byteorder.NFT_BYTEORDER_HTON, 1, 2),
                Payload.transport(reg(s + 1), 2, 2), loadSaddr(reg(s + 2)));
    }

    /**
     * {@code ip daddr & 0.0.0.255}: the destination's last byte (its low bits that pick a
     * firewall shard, {@link TableNames#firewallShard}), the rest zero.
     */
    List<Expr> daddrShardBits() {
        int len = family.addressBytes();
        byte[] mask = new byte[len];
        mask[len - 1] = (byte) (TableNames.FIREWALL_SHARDS - 1);
        return List.of(loadDaddr(NFT_REG_1), new Bitwise(NFT_REG_1, NFT_REG_1, len, Bytes.of(mask), Bytes.of(new byte[len])));
    }

    /**
     * {@code ct original ip daddr . meta l4proto . ct original proto-dst} from 32-bit slot {@code
     * slot} on: an IP frontend after the DNAT, from the connection's original direction. The
     * address by its family's key (nft cannot size the family-less one inside a concatenation).
     */
    List<Expr> originalDaddrProtoPort(int slot) {
        List<Expr> out = new ArrayList<>();
        out.add(new Ct(family == IpFamily.V4 ? Ct.NFT_CT_DST_IP : Ct.NFT_CT_DST_IP6, reg(slot), 0, false));
        out.addAll(originalProtoPort(slot + addrSlots()));
        return out;
    }

    /** {@code meta l4proto . ct original proto-dst} from 32-bit slot {@code slot} on: a NodePort after the DNAT. */
    static List<Expr> originalProtoPort(int slot) {
        return List.of(Meta.load(Meta.NFT_META_L4PROTO, reg(slot)), new Ct(Ct.NFT_CT_PROTO_DST, reg(slot + 1), 0, false));
    }

    /** {@code meta l4proto . th dport} from register 1 on. */
    List<Expr> protoPort() {
        return protoPort(0);
    }

    /** {@code meta l4proto . th dport} from 32-bit slot {@code slot} on. */
    static List<Expr> protoPort(int slot) {
        return List.of(Meta.load(Meta.NFT_META_L4PROTO, reg(slot)), Payload.transport(reg(slot + 1), 2, 2));
    }

    /** The 32-bit slots loaded by {@code loads} (payloads by their length, anything else one). */
    static int slots(List<Expr> loads) {
        int n = 0;
        for (Expr e : loads) {
            int len = e instanceof Payload pl ? pl.len() : 1;
            n += (len + 3) / 4;
        }
        return n;
    }

    /**
     * Whether the packet's source is its destination: {@code update @set { ip saddr . ip saddr }
     * ip saddr . ip daddr @set}. The set, written by the kernel, holds only pairs of equal
     * addresses, so the lookup finds the pair just added exactly when the destination is the
     * source. The element outlives the rule by the set's timeout (a second), so it cannot expire
     * between the two. The key is loaded whole again for the lookup, as nft writes the rule.
     */
    List<Expr> hairpinCheck(String set) {
        return List.of(loadSaddr(reg(0)), loadSaddr(reg(addrSlots())),
                new Dynset(set, Dynset.NFT_DYNSET_OP_UPDATE, NFT_REG_1, 0, 0),
                loadSaddr(reg(0)), loadDaddr(reg(addrSlots())), lookup(set));
    }

    static Expr lookup(String set) {
        return Lookup.member(set, NFT_REG_1);
    }

    static Expr notIn(String set) {
        return Lookup.member(set, NFT_REG_1).withInvert();
    }

    static Expr vmap(String map) {
        return Lookup.map(map, NFT_REG_1, NfTablesUapi.NFT_REG_VERDICT);
    }

    /**
     * Picks one of k endpoints and DNATs to it: the destination key (loaded by {@code keyLoads})
     * and a random index in [0, k) form "key . index", which {@code endpoints} maps to
     * "address . port". nft reads it as
     * {@code dnat ip to ip daddr . meta l4proto . th dport . numgen random mod k map @endpoints}.
     */
    List<Expr> pickEndpoint(List<Expr> keyLoads, String endpoints, int k) {
        List<Expr> out = new ArrayList<>(keyLoads);
        out.add(Numgen.random(reg(slots(keyLoads)), k));
        out.add(Lookup.map(endpoints, NFT_REG_1, NFT_REG_1));
        out.add(Nat.dnat(family.nft().code(), NFT_REG_1, reg(addrSlots())));
        return out;
    }

    /**
     * Hashes the connection's client into a Maglev table and DNATs to the slot's endpoint: the
     * destination key (loaded by {@code keyLoads}) and Jenkins' hash of the client's address and
     * port ({@code withPort} false: its address alone) with a fixed seed, modulo the table's size,
     * form "key . slot", which {@code slots} maps to "address . port". nft reads it as
     * {@code dnat ip to ip daddr . meta l4proto . th dport . jhash ip saddr . th sport mod M seed S
     * map @slots}. The hash lands right after the key, its input after the hash; the port's load
     * zeroes the rest of its register, so that the 8 bytes hashed are the same on every node.
     */
    List<Expr> hashedEndpoint(List<Expr> keyLoads, boolean withPort, String slots, int modulus, int seed) {
        List<Expr> out = new ArrayList<>(keyLoads);
        int hash = slots(keyLoads);
        int input = hash + 1;
        out.add(loadSaddr(reg(input)));
        int len = family.addressBytes();
        if (withPort) {
            out.add(Payload.transport(reg(input + addrSlots()), 0, 2));
            len += 4;
        }
        out.add(Hash.jenkins(reg(input), len, reg(hash), modulus, seed));
        out.add(Lookup.map(slots, NFT_REG_1, NFT_REG_1));
        out.add(Nat.dnat(family.nft().code(), NFT_REG_1, reg(addrSlots())));
        return out;
    }

    /**
     * DNATs to the endpoint at a constant index: {@code dnat ip to ip daddr . meta l4proto . th
     * dport . INDEX map @endpoints}. No match (no endpoint at that index now) leaves the rule.
     */
    List<Expr> endpointAt(List<Expr> keyLoads, String endpoints, int index) {
        List<Expr> out = new ArrayList<>(keyLoads);
        out.add(Immediate.value(reg(slots(keyLoads)), Bytes.host32(index)));
        out.add(Lookup.map(endpoints, NFT_REG_1, NFT_REG_1));
        out.add(Nat.dnat(family.nft().code(), NFT_REG_1, reg(addrSlots())));
        return out;
    }

    /** {@code numgen random mod k vmap @map}: goes where the map sends a random index in [0, k). */
    static List<Expr> randomIndexVmap(int k, String map) {
        return List.of(Numgen.random(NFT_REG_1, k), Lookup.map(map, NFT_REG_1, NfTablesUapi.NFT_REG_VERDICT));
    }

    static Expr verdict(Verdict v) {
        return Immediate.verdict(v);
    }

    /** {@code fib daddr type local}. */
    static List<Expr> daddrLocal() {
        return List.of(Fib.daddrType(NFT_REG_1), Cmp.eq(NFT_REG_1, Bytes.host32(Fib.RTN_LOCAL)));
    }

    /** {@code fib saddr type local}: the packet comes from this node. */
    static List<Expr> saddrLocal() {
        return List.of(new Fib(NFT_REG_1, Fib.NFT_FIB_RESULT_ADDRTYPE, Fib.NFTA_FIB_F_SADDR),
                Cmp.eq(NFT_REG_1, Bytes.host32(Fib.RTN_LOCAL)));
    }

    /**
     * {@code iifname "NAME"}, or {@code iifname "PREFIX*"} with {@code prefix}: nft compares the
     * whole NUL-padded 16-byte name for a name, and only the prefix's bytes for a wildcard.
     */
    static List<Expr> iifname(String name, boolean prefix, boolean negate) {
        byte[] b = name.getBytes(StandardCharsets.US_ASCII);
        Bytes data = Bytes.of(prefix ? b : Arrays.copyOf(b, 16));
        return List.of(Meta.load(Meta.NFT_META_IIFNAME, NFT_REG_1), new Cmp(NFT_REG_1, negate ? Cmp.Op.NEQ : Cmp.Op.EQ, data));
    }

    /** {@code ct state new}. */
    static List<Expr> ctStateNew() {
        return List.of(Ct.load(Ct.NFT_CT_STATE, NFT_REG_1),
                new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(Ct.STATE_NEW), Bytes.host32(0)),
                new Cmp(NFT_REG_1, Cmp.Op.NEQ, Bytes.host32(0)));
    }

    /** {@code ct state invalid}: conntrack could not place the packet (an out-of-window segment, bad flags). */
    static List<Expr> ctStateInvalid() {
        return List.of(Ct.load(Ct.NFT_CT_STATE, NFT_REG_1),
                new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(Ct.STATE_INVALID), Bytes.host32(0)),
                new Cmp(NFT_REG_1, Cmp.Op.NEQ, Bytes.host32(0)));
    }

    /** {@code ct status dnat}. */
    static List<Expr> ctStatusDnat() {
        return List.of(Ct.load(Ct.NFT_CT_STATUS, NFT_REG_1),
                new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(Ct.STATUS_DNAT), Bytes.host32(0)),
                new Cmp(NFT_REG_1, Cmp.Op.NEQ, Bytes.host32(0)));
    }

    /** {@code ct status & dnat == 0}: a connection no NAT sent elsewhere. */
    static List<Expr> ctStatusNotDnat() {
        return List.of(Ct.load(Ct.NFT_CT_STATUS, NFT_REG_1),
                new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(Ct.STATUS_DNAT), Bytes.host32(0)),
                Cmp.eq(NFT_REG_1, Bytes.host32(0)));
    }

    /** {@code meta mark set meta mark | mark}. */
    static List<Expr> setMark(int mark) {
        return List.of(Meta.load(Meta.NFT_META_MARK, NFT_REG_1),
                new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(~mark), Bytes.host32(mark)),
                Meta.store(Meta.NFT_META_MARK, NFT_REG_1));
    }

    /** {@code meta mark & mark == 0}. */
    static List<Expr> markClear(int mark) {
        return List.of(Meta.load(Meta.NFT_META_MARK, NFT_REG_1),
                new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(mark), Bytes.host32(0)),
                Cmp.eq(NFT_REG_1, Bytes.host32(0)));
    }

    /** {@code meta mark set meta mark ^ mark}: clear the bit so a re-routed packet is not masqueraded twice. */
    static List<Expr> flipMark(int mark) {
        return List.of(Meta.load(Meta.NFT_META_MARK, NFT_REG_1),
                new Bitwise(NFT_REG_1, NFT_REG_1, 4, Bytes.host32(0xffffffff), Bytes.host32(mark)),
                Meta.store(Meta.NFT_META_MARK, NFT_REG_1));
    }

    /** {@code numgen random mod m == 0}: true with probability 1/m, fresh for every rule. */
    static List<Expr> oneIn(int m) {
        return List.of(Numgen.random(NFT_REG_1, m), Cmp.eq(NFT_REG_1, Bytes.host32(0)));
    }

    static List<Expr> l4proto(Protocol p) {
        return List.of(Meta.load(Meta.NFT_META_L4PROTO, NFT_REG_1), Cmp.eq(NFT_REG_1, Bytes.u8(p.number())));
    }

    /** {@code meta l4proto P dnat to addr:port}. */
    List<Expr> dnat(Protocol p, InetAddress addr, int port) {
        List<Expr> out = new ArrayList<>(l4proto(p));
        out.add(Immediate.value(NFT_REG_1, Bytes.ip(addr)));
        out.add(Immediate.value(NFT_REG_2, Bytes.be16(port)));
        out.add(Nat.dnat(family.nft().code(), NFT_REG_1, NFT_REG_2));
        return out;
    }

    /**
     * {@code ip saddr . SERVICE-IP . PORT . ENDPOINT-IP . ENDPOINT-PORT} from register 1 on: the
     * key of ClientIP affinity, the client's address with constants naming the service port and
     * the endpoint. Each constant is loaded at its own length (a port in two bytes), as nft
     * loads one: the kernel zeroes the rest of the register, and nft lists the rule (loaded
     * padded to four bytes, {@code nft -j list ruleset} aborted on it: {@code mpz_get_be16:
     * Assertion `cnt <= 1'}).
     */
    List<Expr> affinityKey(InetAddress serviceIp, int port, InetAddress endpoint, int endpointPort) {
        int s = addrSlots();
        return List.of(loadSaddr(reg(0)),
                Immediate.value(reg(s), Bytes.ip(serviceIp)),
                Immediate.value(reg(2 * s), Bytes.be16(port)),
                Immediate.value(reg(2 * s + 1), Bytes.ip(endpoint)),
                Immediate.value(reg(3 * s + 1), Bytes.be16(endpointPort)));
    }

    /**
     * A lookup of the constant key "service IP . protocol . port . endpoint . port" in
     * {@code set}: it always matches, and the matched element's counter counts the connection.
     * The fields are loaded one per immediate (an immediate holds 16 bytes at most), each at its
     * own length, as in {@link #affinityKey}.
     */
    List<Expr> countEndpoint(InetAddress serviceIp, int proto, int port, InetAddress endpoint, int endpointPort, String set) {
        int s = addrSlots();
        return List.of(Immediate.value(reg(0), Bytes.ip(serviceIp)),
                Immediate.value(reg(s), Bytes.u8(proto)),
                Immediate.value(reg(s + 1), Bytes.be16(port)),
                Immediate.value(reg(s + 2), Bytes.ip(endpoint)),
                Immediate.value(reg(2 * s + 2), Bytes.be16(endpointPort)),
                lookup(set));
    }

    /** {@code update @set { KEY timeout T }}, the key loaded by {@code keyLoads} from register 1 on. */
    static List<Expr> remember(List<Expr> keyLoads, String set, long timeoutMs) {
        List<Expr> out = new ArrayList<>(keyLoads);
        out.add(new Dynset(set, Dynset.NFT_DYNSET_OP_UPDATE, NFT_REG_1, 0, timeoutMs));
        return out;
    }

    /** ICMP (or ICMPv6) port unreachable: what REJECT sends for every protocol. */
    Expr reject() {
        return new Reject(Reject.NFT_REJECT_ICMP_UNREACH,
                family == IpFamily.V4 ? Reject.ICMP_PORT_UNREACH : Reject.ICMPV6_PORT_UNREACH);
    }

    static List<Expr> concat(List<Expr> a, List<Expr> b) {
        List<Expr> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    static List<Expr> concat(List<Expr> a, Expr... more) {
        List<Expr> out = new ArrayList<>(a);
        out.addAll(List.of(more));
        return out;
    }
}
