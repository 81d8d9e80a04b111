package io.nftproxy.netlink.nft.wire;

import java.util.ArrayList;
import java.util.List;

import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.msg.NlMessage;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.Verdict;

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
 * Our expressions in the text form {@code nft --debug=netlink} prints for what it sends, so a test
 * can hold our encoding against nft's own, statement by statement.
 */
public final class DebugFormat {
    private static final String[] BASES = {"link", "network", "transport", "inner"};
    private static final String[] CMP = {"eq", "neq", "lt", "lte", "gt", "gte"};
    private static final String[] META = {"len", "protocol", "priority", "mark", "iif", "oif", "iifname", "oifname",
        "iiftype", "oiftype", "skuid", "skgid", "nftrace", "rtclassid", "secmark", "nfproto", "l4proto"};
    private static final String[] CT = {"state", "direction", "status", "mark", "secmark", "expiration", "helper",
        "l3protocol", "src", "dst", "protocol", "proto_src", "proto_dst"};

    private DebugFormat() {
    }

    /** libnftnl prints data as 32-bit words in host order, space separated. */
    static String words(Bytes b) {
        byte[] a = b.toArray();
        List<String> w = new ArrayList<>();
        for (int i = 0; i < a.length; i += 4) {
            int v = 0;
            for (int j = 0; j < 4 && i + j < a.length; j++) {
                v |= (a[i + j] & 0xff) << (8 * j);
            }
            w.add(String.format("0x%08x", v));
        }
        return String.join(" ", w);
    }

    static String verdict(Verdict v) {
        return v.chain() == null ? v.kind().keyword() : v.kind().keyword() + " -> " + v.chain();
    }

    public static String format(Expr e) {
        if (e instanceof Payload p) {
            return "payload load " + p.len() + "b @ " + BASES[p.base()] + " header + " + p.offset() + " => reg " + p.dreg();
        }
        if (e instanceof Cmp c) {
            return "cmp " + CMP[c.op().ordinal()] + " reg " + c.sreg() + " " + words(c.data());
        }
        if (e instanceof Meta m) {
            return m.set() ? "meta set " + META[m.key()] + " with reg " + m.register()
                    : "meta load " + META[m.key()] + " => reg " + m.register();
        }
        if (e instanceof Immediate i) {
            if (i.data() instanceof Verdict v) {
                return "immediate reg " + i.dreg() + " " + verdict(v);
            }
            return "immediate reg " + i.dreg() + " " + words(((Data.Value) i.data()).bytes());
        }
        if (e instanceof Lookup l) {
            return "lookup reg " + l.sreg() + " set " + l.set() + (l.dreg() >= 0 ? " dreg " + l.dreg() : "")
                    + (l.invert() ? " 0x1" : "");
        }
        if (e instanceof Numgen n) {
            return "numgen reg " + n.dreg() + " = " + (n.type() == Numgen.NFT_NG_RANDOM ? "random" : "inc") + " mod "
                    + n.modulus() + (n.offset() != 0 ? " offset " + n.offset() : "");
        }
        if (e instanceof Hash h) {
            String f = h.type() == Hash.NFT_HASH_SYM ? "symhash()"
                    : "jhash(reg " + h.sreg() + ", " + h.len() + ", 0x" + Integer.toHexString(h.seed() == null ? 0 : h.seed()) + ")";
            return "hash reg " + h.dreg() + " = " + f + " % mod " + h.modulus() + (h.offset() != 0 ? " offset " + h.offset() : "");
        }
        if (e instanceof Byteorder b) {
            return "byteorder reg " + b.dreg() + " = " + (b.op() == Byteorder.NFT_BYTEORDER_HTON ? "hton" : "ntoh")
                    + "(reg " + b.sreg() + ", " + b.size() + ", " + b.len() + ")";
        }
        if (e instanceof Bitwise b) {
            return "bitwise reg " + b.dreg() + " = ( reg " + b.sreg() + " & " + words(b.mask()) + " ) ^ " + words(b.xor());
        }
        if (e instanceof Ct c) {
            return c.set() ? "ct set " + CT[c.key()] + " with reg " + c.register()
                    : "ct load " + CT[c.key()] + " => reg " + c.register();
        }
        if (e instanceof Fib f) {
            List<String> in = new ArrayList<>();
            if ((f.flags() & Fib.NFTA_FIB_F_SADDR) != 0) {
                in.add("saddr");
            }
            if ((f.flags() & Fib.NFTA_FIB_F_DADDR) != 0) {
                in.add("daddr");
            }
            String r = f.result() == Fib.NFT_FIB_RESULT_ADDRTYPE ? "type" : f.result() == Fib.NFT_FIB_RESULT_OIF ? "oif" : "oifname";
            return "fib " + String.join(" . ", in) + " " + r + " => reg " + f.dreg();
        }
        if (e instanceof Nat n) {
            StringBuilder sb = new StringBuilder("nat " + (n.type() == Nat.NFT_NAT_DNAT ? "dnat" : "snat") + " "
                    + (n.family() == Family.IP6.code() ? "ip6" : "ip"));
            if (n.regAddrMin() != 0) {
                sb.append(" addr_min reg ").append(n.regAddrMin());
            }
            if (n.regAddrMax() != n.regAddrMin()) {
                sb.append(" addr_max reg ").append(n.regAddrMax());
            }
            if (n.regProtoMin() != 0) {
                sb.append(" proto_min reg ").append(n.regProtoMin());
            }
            if (n.regProtoMax() != n.regProtoMin()) {
                sb.append(" proto_max reg ").append(n.regProtoMax());
            }
            int explicit = n.regAddrMin() != 0 ? n.flags() & ~Nat.NF_NAT_RANGE_MAP_IPS : n.flags();
            if (explicit != 0) {
                sb.append(String.format(" flags 0x%x", explicit));
            }
            return sb.toString();
        }
        if (e instanceof Masq m) {
            return m.flags() != 0 ? String.format("masq flags 0x%x", m.flags()) : "masq";
        }
        if (e instanceof Counter c) {
            return "counter pkts " + c.packets() + " bytes " + c.bytes();
        }
        if (e instanceof Dynset d) {
            return "dynset " + (d.op() == Dynset.NFT_DYNSET_OP_UPDATE ? "update" : d.op() == Dynset.NFT_DYNSET_OP_ADD
                    ? "add" : "delete") + " reg_key " + d.sregKey() + (d.sregData() != 0 ? " reg_data " + d.sregData() : "")
                    + " set " + d.set() + (d.timeoutMs() != 0 ? " timeout " + d.timeoutMs() + "ms" : "");
        }
        if (e instanceof Reject r) {
            return "reject type " + r.type() + " code " + r.code();
        }
        throw new IllegalArgumentException("no debug form for " + e);
    }

    /** The expressions of the bytes we send for a rule, decoded again, in nft's debug notation. */
    public static List<String> sent(Rule r) {
        MessageWriter w = new MessageWriter(1 << 16);
        NftCodec.encodeRule(w, Op.Verb.ADD, r, 1, 0);
        Rule decoded = NftCodec.decodeRule(NlMessage.split(w.finish()).get(0));
        List<String> lines = new ArrayList<>();
        for (Expr e : decoded.exprs()) {
            lines.add(format(e));
        }
        return lines;
    }

    /** Parses nft --debug=netlink output into one list of expression lines per rule. */
    public static List<List<String>> parseNftDebug(String out) {
        List<List<String>> rules = new ArrayList<>();
        List<String> cur = null;
        for (String line : out.split("\n")) {
            String t = line.trim();
            if (t.startsWith("[ ") && t.endsWith(" ]")) {
                if (cur == null) {
                    cur = new ArrayList<>();
                    rules.add(cur);
                }
                cur.add(t.substring(2, t.length() - 2).trim());
            } else {
                cur = null;
            }
        }
        return rules;
    }
}
