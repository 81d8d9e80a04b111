package io.nftproxy.netlink.nft.print;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Verdict;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.nftproxy.netlink.nft.print.ValueFormat.Kind;
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
import io.nftproxy.netlink.nft.expr.Opaque;
import io.nftproxy.netlink.nft.expr.Payload;
import io.nftproxy.netlink.nft.expr.Reject;

/**
 * Turns a rule's register-level expressions back into nft statements, as nft itself does when it
 * lists a ruleset: loads become symbolic values held in registers; compares, lookups and
 * statements consume them. What cannot be named is written in nft's raw forms ({@code @nh,128,32},
 * hex values) so the output stays readable by {@code nft -f}.
 */
final class RulePrinter {
    /**
     * A value in a register. {@code origin} ties the fields of one multi-field map result
     * together (-1 otherwise); {@code field} is the field's index in it.
     */
    private record Sym(String text, Kind kind, int len, Bytes literal, int order, int origin, int field, boolean binop) {
        Sym(String text, Kind kind, int len, Bytes literal, int order) {
            this(text, kind, len, literal, order, -1, 0, false);
        }

        Sym(String text, Kind kind, int len, Bytes literal, int order, int origin, int field) {
            this(text, kind, len, literal, order, origin, field, false);
        }
    }

    private final Family family;
    private final Function<String, NftSet> sets;
    private final Map<Integer, Sym> slots = new HashMap<>();
    private final List<String> out = new ArrayList<>();
    private int loads;

    private RulePrinter(Family family, Function<String, NftSet> sets) {
        this.family = family;
        this.sets = sets;
    }

    static String print(Family family, List<Expr> exprs, Function<String, NftSet> sets) {
        RulePrinter p = new RulePrinter(family, sets);
        for (Expr e : exprs) {
            p.apply(e);
        }
        return String.join(" ", p.out);
    }

    /** 32-bit register slot of a register number (NFT_REG_1..4 are 16 bytes wide). */
    private static int slot(int reg) {
        return reg >= 8 ? reg - 8 : (reg - 1) * 4;
    }

    private void load(int reg, String text, Kind kind, int len) {
        slots.put(slot(reg), new Sym(text, kind, len, null, loads++));
    }

    private Sym take(int reg) {
        Sym s = slots.get(slot(reg));
        return s != null ? s : new Sym("reg" + reg, Kind.RAW, 0, null, -1);
    }

    /** The (possibly concatenated) value at {@code reg} of {@code keyLen} bytes, or a loaded run. */
    private List<Sym> takeConcat(int reg, int keyLen) {
        List<Sym> parts = new ArrayList<>();
        int s = slot(reg);
        Sym first = slots.get(s);
        if (first == null) {
            parts.add(new Sym("reg" + reg, Kind.RAW, keyLen, null, -1));
            return parts;
        }
        parts.add(first);
        int used = (first.len + 3) & ~3;
        int next = s + used / 4;
        while (keyLen > 0 ? used < keyLen : true) {
            Sym n = slots.get(next);
            if (n == null || n.order != parts.get(parts.size() - 1).order + 1 || keyLen <= 0 && parts.size() > 8) {
                break;
            }
            parts.add(n);
            int w = (n.len + 3) & ~3;
            used += w;
            next += w / 4;
        }
        return parts;
    }

    private static String joinConcat(List<Sym> parts) {
        List<String> t = new ArrayList<>();
        for (Sym p : parts) {
            t.add(p.text);
        }
        return String.join(" . ", t);
    }

    private void apply(Expr e) {
        if (e instanceof Payload p) {
            payload(p);
        } else if (e instanceof Meta m) {
            meta(m);
        } else if (e instanceof Cmp c) {
            cmp(c);
        } else if (e instanceof Immediate i) {
            immediate(i);
        } else if (e instanceof Lookup l) {
            lookup(l);
        } else if (e instanceof Numgen n) {
            String t = "numgen " + (n.type() == Numgen.NFT_NG_RANDOM ? "random" : "inc") + " mod " + n.modulus()
                    + (n.offset() != 0 ? " offset " + n.offset() : "");
            load(n.dreg(), t, Kind.HOST_INT, 4);
        } else if (e instanceof Hash h) {
            List<Sym> input = h.type() == Hash.NFT_HASH_SYM ? List.of() : takeConcat(h.sreg(), h.len());
            String t = h.type() == Hash.NFT_HASH_SYM ? "symhash" : "jhash " + joinConcat(input);
            t += " mod " + h.modulus() + (h.seed() != null ? " seed 0x" + Integer.toHexString(h.seed()) : "")
                    + (h.offset() != 0 ? " offset " + h.offset() : "");
            // A hash of loads stands where its first input was loaded: a concatenation that goes on
            // with it ("ip daddr . … . jhash ip saddr . th sport") loaded the hash's input next.
            int order = input.isEmpty() || input.get(0).order < 0 ? loads++ : input.get(0).order;
            slots.put(slot(h.dreg()), new Sym(t, Kind.HOST_INT, 4, null, order));
        } else if (e instanceof Ct c) {
            ct(c);
        } else if (e instanceof Bitwise b) {
            bitwise(b);
        } else if (e instanceof Byteorder b) {
            // nft's own compares of host-order values carry one; the statement reads the same.
            Sym src = take(b.sreg());
            slots.put(slot(b.dreg()), new Sym(src.text, src.kind == Kind.HOST_INT ? Kind.BE_INT : src.kind, src.len,
                    src.literal, src.order));
        } else if (e instanceof Fib f) {
            fib(f);
        } else if (e instanceof Nat n) {
            nat(n);
        } else if (e instanceof Masq m) {
            StringBuilder sb = new StringBuilder("masquerade");
            if (m.regProtoMin() != 0) {
                sb.append(" to :").append(value(take(m.regProtoMin()), Kind.PORT));
            }
            natFlags(sb, m.flags());
            out.add(sb.toString());
        } else if (e instanceof Counter c) {
            out.add("counter packets " + c.packets() + " bytes " + c.bytes());
        } else if (e instanceof Dynset d) {
            dynset(d);
        } else if (e instanceof Reject r) {
            out.add(reject(r));
        } else if (e instanceof Opaque o) {
            // nft would print it; we can only say it is there (in a form nft refuses, never a comment
            // that would hide the rest of the rule), so that nobody takes the rule for complete.
            out.add("<" + o.name() + ": not modelled, " + o.data().length() + " bytes>");
        }
    }

    private void payload(Payload p) {
        String name = null;
        Kind kind = Kind.RAW;
        if (p.base() == Payload.NFT_PAYLOAD_NETWORK_HEADER) {
            boolean v6 = family == Family.IP6 || (family == Family.INET && p.len() == 16);
            if (!v6 && p.offset() == 12 && p.len() == 4) {
                name = "ip saddr";
                kind = Kind.IPV4;
            } else if (!v6 && p.offset() == 16 && p.len() == 4) {
                name = "ip daddr";
                kind = Kind.IPV4;
            } else if (family != Family.IP6 && p.offset() == 9 && p.len() == 1) {
                name = "ip protocol";
                kind = Kind.PROTO;
            } else if (v6 && p.offset() == 8 && p.len() == 16) {
                name = "ip6 saddr";
                kind = Kind.IPV6;
            } else if (v6 && p.offset() == 24 && p.len() == 16) {
                name = "ip6 daddr";
                kind = Kind.IPV6;
            } else if (family == Family.IP6 && p.offset() == 6 && p.len() == 1) {
                name = "ip6 nexthdr";
                kind = Kind.PROTO;
            }
        } else if (p.base() == Payload.NFT_PAYLOAD_TRANSPORT_HEADER && p.len() == 2) {
            if (p.offset() == 0) {
                name = "th sport";
                kind = Kind.PORT;
            } else if (p.offset() == 2) {
                name = "th dport";
                kind = Kind.PORT;
            }
        }
        if (name == null) {
            String base = switch (p.base()) {
                case Payload.NFT_PAYLOAD_LL_HEADER -> "@ll";
                case Payload.NFT_PAYLOAD_NETWORK_HEADER -> "@nh";
                default -> "@th";
            };
            name = base + "," + (p.offset() * 8) + "," + (p.len() * 8);
        }
        load(p.dreg(), name, kind, p.len());
    }

    private void meta(Meta m) {
        Kind kind;
        int len = 4;
        switch (m.key()) {
            case Meta.NFT_META_L4PROTO -> {
                kind = Kind.PROTO;
                len = 1;
            }
            case Meta.NFT_META_NFPROTO -> {
                kind = Kind.NFPROTO;
                len = 1;
            }
            case Meta.NFT_META_MARK -> kind = Kind.MARK;
            case Meta.NFT_META_IIFNAME, Meta.NFT_META_OIFNAME -> {
                kind = Kind.IFNAME;
                len = 16;
            }
            default -> kind = Kind.HOST_INT;
        }
        String name = m.key() == Meta.NFT_META_IIFNAME || m.key() == Meta.NFT_META_OIFNAME
                ? Meta.keyName(m.key()) : "meta " + Meta.keyName(m.key());
        if (m.set()) {
            out.add(name + " set " + value(take(m.register()), kind));
        } else {
            load(m.register(), name, kind, len);
        }
    }

    private void ct(Ct c) {
        Kind kind = switch (c.key()) {
            case Ct.NFT_CT_STATE -> Kind.CT_STATE;
            case Ct.NFT_CT_STATUS -> Kind.CT_STATUS;
            case Ct.NFT_CT_MARK -> Kind.MARK;
            case Ct.NFT_CT_PROTO_SRC, Ct.NFT_CT_PROTO_DST -> Kind.PORT;
            case Ct.NFT_CT_PROTOCOL -> Kind.PROTO;
            case Ct.NFT_CT_SRC, Ct.NFT_CT_DST -> family == Family.IP6 ? Kind.IPV6 : Kind.IPV4;
            case Ct.NFT_CT_SRC_IP, Ct.NFT_CT_DST_IP -> Kind.IPV4;
            case Ct.NFT_CT_SRC_IP6, Ct.NFT_CT_DST_IP6 -> Kind.IPV6;
            default -> Kind.HOST_INT;
        };
        String dir = c.direction() < 0 ? "" : c.direction() == 0 ? "original " : "reply ";
        String name = "ct " + dir + Ct.keyName(c.key());
        if (c.set()) {
            out.add(name + " set " + value(take(c.register()), kind));
        } else {
            int len = kind == Kind.PORT ? 2 : kind == Kind.PROTO ? 1 : kind == Kind.IPV6 ? 16 : 4;
            load(c.register(), name, kind, len);
        }
    }

    private void fib(Fib f) {
        List<String> in = new ArrayList<>();
        if ((f.flags() & Fib.NFTA_FIB_F_SADDR) != 0) {
            in.add("saddr");
        }
        if ((f.flags() & Fib.NFTA_FIB_F_DADDR) != 0) {
            in.add("daddr");
        }
        if ((f.flags() & Fib.NFTA_FIB_F_MARK) != 0) {
            in.add("mark");
        }
        if ((f.flags() & Fib.NFTA_FIB_F_IIF) != 0) {
            in.add("iif");
        }
        if ((f.flags() & Fib.NFTA_FIB_F_OIF) != 0) {
            in.add("oif");
        }
        String result = switch (f.result()) {
            case Fib.NFT_FIB_RESULT_OIF -> "oif";
            case Fib.NFT_FIB_RESULT_OIFNAME -> "oifname";
            default -> "type";
        };
        Kind kind = f.result() == Fib.NFT_FIB_RESULT_ADDRTYPE ? Kind.FIB_ADDRTYPE : Kind.HOST_INT;
        load(f.dreg(), "fib " + String.join(" . ", in) + " " + result, kind, 4);
    }

    private void bitwise(Bitwise b) {
        Sym src = take(b.sreg());
        int len = b.len();
        Bytes mask = b.mask();
        Bytes xor = b.xor();
        boolean xorZero = isAll(xor, 0);
        String text;
        if (xorZero) {
            // An address masked prints its mask as an address ("ip6 daddr & ::ff"): nft reads a
            // 128-bit number as nothing else.
            boolean typed = src.kind == Kind.MARK || src.kind == Kind.IPV4 || src.kind == Kind.IPV6;
            text = src.text + " & " + ValueFormat.format(typed ? src.kind : Kind.RAW, mask);
        } else if (complement(mask, xor)) {
            text = src.text + " | " + ValueFormat.format(src.kind == Kind.MARK ? Kind.MARK : Kind.RAW, xor);
        } else if (isAll(mask, 0xff)) {
            text = src.text + " ^ " + ValueFormat.format(src.kind == Kind.MARK ? Kind.MARK : Kind.RAW, xor);
        } else {
            text = "(" + src.text + " & " + mask + ") ^ " + xor;
        }
        Sym s = new Sym(text, src.kind, len, null, loads++, -1, 0, true);
        // Remember the mask for flag-style printing of "ct state established,related".
        slots.put(slot(b.dreg()), xorZero && (src.kind == Kind.CT_STATE || src.kind == Kind.CT_STATUS)
                ? new Sym(src.text, src.kind, len, mask, s.order) : s);
    }

    private static boolean isAll(Bytes b, int v) {
        for (int i = 0; i < b.length(); i++) {
            if (b.get(i) != v) {
                return false;
            }
        }
        return true;
    }

    private static boolean complement(Bytes mask, Bytes xor) {
        for (int i = 0; i < mask.length(); i++) {
            if ((mask.get(i) ^ xor.get(i)) != 0xff || (mask.get(i) & xor.get(i)) != 0) {
                return false;
            }
        }
        return true;
    }

    private void cmp(Cmp c) {
        Sym s = take(c.sreg());
        if (s.literal != null && (s.kind == Kind.CT_STATE || s.kind == Kind.CT_STATUS)
                && c.op() == Cmp.Op.NEQ && isAll(c.data(), 0)) {
            // nft's flag match: "ct state established,related" means (state & mask) != 0.
            out.add(s.text + " " + ValueFormat.format(s.kind, s.literal));
            return;
        }
        if (s.literal != null && (s.kind == Kind.CT_STATE || s.kind == Kind.CT_STATUS)
                && c.op() == Cmp.Op.EQ && isAll(c.data(), 0)) {
            // Its negation: "ct status ! dnat" means (status & mask) == 0.
            out.add(s.text + " ! " + ValueFormat.format(s.kind, s.literal));
            return;
        }
        String v = ValueFormat.format(s.kind, c.data());
        // After a binary operation nft needs the operator spelled out ("meta mark & 0x4000 == 0x0").
        out.add(s.text + (c.op() == Cmp.Op.EQ && !s.binop ? " " : " " + c.op().symbol() + " ") + v);
    }

    private void immediate(Immediate i) {
        if (i.data() instanceof Verdict v) {
            out.add(v.toString());
        } else {
            Bytes b = ((Data.Value) i.data()).bytes();
            slots.put(slot(i.dreg()), new Sym(b.toString(), Kind.RAW, b.length(), b, loads++));
        }
    }

    private void lookup(Lookup l) {
        NftSet set = sets.apply(l.set());
        int keyLen = set != null ? set.keyLength() : -1;
        List<Sym> key = typed(takeConcat(l.sreg(), keyLen), set);
        String k = joinConcat(key);
        if (l.dreg() == Lookup.NO_DREG) {
            out.add(k + (l.invert() ? " != @" : " @") + l.set());
        } else if (l.dreg() == NfTablesUapi.NFT_REG_VERDICT) {
            out.add(k + " vmap @" + l.set());
        } else {
            if (set == null || set.data() == null) {
                load(l.dreg(), k + " map @" + l.set(), Kind.RAW, 4);
                return;
            }
            List<DataType> fields = set.data().fields();
            String text = k + " map @" + l.set();
            int origin = loads;
            int s = slot(l.dreg());
            for (int i = 0; i < fields.size(); i++) {
                DataType f = fields.get(i);
                String t = i == 0 ? text : "(" + text + ")#" + i;
                slots.put(s, new Sym(t, ValueFormat.kindOf(f), f.length(), null, loads++, fields.size() > 1 ? origin : -1, i));
                s += (f.length() + 3) / 4;
            }
        }
    }

    /**
     * Constants in a set's key printed as the set's field types say ({@code 10.96.0.1 . tcp . 80},
     * not {@code 0x0a600001 . 0x06000000 . 0x00500000}): each field's bytes without its padding.
     */
    private static List<Sym> typed(List<Sym> key, NftSet set) {
        if (set == null || set.key().size() != key.size()) {
            return key;
        }
        List<Sym> out = new ArrayList<>(key);
        for (int i = 0; i < key.size(); i++) {
            Sym k = key.get(i);
            DataType f = set.key().get(i);
            if (k.literal != null && k.kind == Kind.RAW && k.literal.length() >= f.length()) {
                out.set(i, new Sym(ValueFormat.format(ValueFormat.kindOf(f), k.literal.slice(0, f.length())), ValueFormat.kindOf(f),
                        f.length(), k.literal, k.order, k.origin, k.field));
            }
        }
        return out;
    }

    private String value(Sym s, Kind kind) {
        if (s.literal != null && s.kind == Kind.RAW) {
            return ValueFormat.format(kind, s.literal);
        }
        return s.text;
    }

    private void nat(Nat n) {
        boolean v6 = n.family() == Family.IP6.code();
        StringBuilder sb = new StringBuilder(n.type() == Nat.NFT_NAT_DNAT ? "dnat" : "snat");
        if (family == Family.INET) {
            sb.append(v6 ? " ip6" : " ip");
        }
        if (n.regAddrMin() != 0 || n.regProtoMin() != 0) {
            sb.append(" to ");
            Sym pa = n.regAddrMin() != 0 ? take(n.regAddrMin()) : null;
            Sym pp = n.regProtoMin() != 0 ? take(n.regProtoMin()) : null;
            if (pa != null && pp != null && pa.origin() >= 0 && pa.origin() == pp.origin() && pa.field() == 0
                    && pp.field() == 1) {
                // Address and port from one map lookup: "dnat ip to K map @m" with concatenated data.
                sb.setLength(0);
                sb.append(n.type() == Nat.NFT_NAT_DNAT ? "dnat" : "snat").append(v6 ? " ip6" : " ip").append(" to ");
                sb.append(pa.text());
                natFlags(sb, n.flags() & ~Nat.NF_NAT_RANGE_PROTO_SPECIFIED & ~Nat.NF_NAT_RANGE_MAP_IPS);
                out.add(sb.toString());
                return;
            }
            if (n.regAddrMin() != 0) {
                Sym a = take(n.regAddrMin());
                String addr = value(a, v6 ? Kind.IPV6 : Kind.IPV4);
                boolean bracket = v6 && n.regProtoMin() != 0 && a.literal != null;
                sb.append(bracket ? "[" + addr + "]" : addr);
                if (n.regAddrMax() != 0 && n.regAddrMax() != n.regAddrMin()) {
                    sb.append('-').append(value(take(n.regAddrMax()), v6 ? Kind.IPV6 : Kind.IPV4));
                }
            }
            if (n.regProtoMin() != 0) {
                sb.append(':').append(value(take(n.regProtoMin()), Kind.PORT));
                if (n.regProtoMax() != 0 && n.regProtoMax() != n.regProtoMin()) {
                    sb.append('-').append(value(take(n.regProtoMax()), Kind.PORT));
                }
            }
        }
        natFlags(sb, n.flags());
        out.add(sb.toString());
    }

    private static void natFlags(StringBuilder sb, int flags) {
        List<String> f = new ArrayList<>();
        if ((flags & Nat.NF_NAT_RANGE_PROTO_RANDOM) != 0) {
            f.add("random");
        }
        if ((flags & Nat.NF_NAT_RANGE_PROTO_RANDOM_FULLY) != 0) {
            f.add("fully-random");
        }
        if ((flags & Nat.NF_NAT_RANGE_PERSISTENT) != 0) {
            f.add("persistent");
        }
        if (!f.isEmpty()) {
            sb.append(' ').append(String.join(",", f));
        }
    }

    private void dynset(Dynset d) {
        NftSet set = sets.apply(d.set());
        String k = joinConcat(typed(takeConcat(d.sregKey(), set != null ? set.keyLength() : -1), set));
        StringBuilder sb = new StringBuilder();
        sb.append(d.op() == Dynset.NFT_DYNSET_OP_ADD ? "add" : d.op() == Dynset.NFT_DYNSET_OP_UPDATE ? "update" : "delete");
        sb.append(" @").append(d.set()).append(" { ").append(k);
        if (d.timeoutMs() != 0) {
            sb.append(" timeout ").append(ValueFormat.duration(d.timeoutMs()));
        }
        if (d.sregData() != 0) {
            Kind kind = set != null && set.data() != null ? ValueFormat.kindOf(set.data()) : Kind.RAW;
            sb.append(" : ").append(value(take(d.sregData()), kind));
        }
        sb.append(" }");
        out.add(sb.toString());
    }

    private String reject(Reject r) {
        return switch (r.type()) {
            case Reject.NFT_REJECT_TCP_RST -> "reject with tcp reset";
            case Reject.NFT_REJECT_ICMPX_UNREACH -> "reject with icmpx type " + switch (r.code()) {
                case Reject.NFT_REJECT_ICMPX_NO_ROUTE -> "no-route";
                case Reject.NFT_REJECT_ICMPX_PORT_UNREACH -> "port-unreachable";
                case Reject.NFT_REJECT_ICMPX_HOST_UNREACH -> "host-unreachable";
                case Reject.NFT_REJECT_ICMPX_ADMIN_PROHIBITED -> "admin-prohibited";
                default -> Integer.toString(r.code());
            };
            default -> family == Family.IP6
                    ? "reject with icmpv6 type " + switch (r.code()) {
                        case Reject.ICMPV6_NOROUTE -> "no-route";
                        case Reject.ICMPV6_ADM_PROHIBITED -> "admin-prohibited";
                        case Reject.ICMPV6_ADDR_UNREACH -> "addr-unreachable";
                        case Reject.ICMPV6_PORT_UNREACH -> "port-unreachable";
                        default -> Integer.toString(r.code());
                    }
                    : "reject with icmp type " + switch (r.code()) {
                        case Reject.ICMP_NET_UNREACH -> "net-unreachable";
                        case Reject.ICMP_HOST_UNREACH -> "host-unreachable";
                        case Reject.ICMP_PROT_UNREACH -> "prot-unreachable";
                        case Reject.ICMP_PORT_UNREACH -> "port-unreachable";
                        case Reject.ICMP_NET_ANO -> "net-prohibited";
                        case Reject.ICMP_HOST_ANO -> "host-prohibited";
                        case Reject.ICMP_PKT_FILTERED -> "admin-prohibited";
                        default -> Integer.toString(r.code());
                    };
        };
    }
}
