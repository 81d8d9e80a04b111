package io.nftproxy.netlink.nft.expr;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.NfTablesUapi;

/** The NFTA_RULE_EXPRESSIONS list: encoding a rule's expressions and decoding them by name. */
public final class Exprs {
    private Exprs() {
    }

    public static void encodeList(MessageWriter w, int attrType, List<Expr> exprs) {
        int list = w.beginNested(attrType);
        for (Expr e : exprs) {
            int elem = w.beginNested(NfTablesUapi.NFTA_LIST_ELEM);
            w.putString(NfTablesUapi.NFTA_EXPR_NAME, e.name());
            int data = w.beginNested(NfTablesUapi.NFTA_EXPR_DATA);
            e.encode(w);
            w.endNested(data);
            w.endNested(elem);
        }
        w.endNested(list);
    }

    public static List<Expr> decodeList(Attrs list) {
        List<Expr> out = new ArrayList<>();
        for (Attrs.Attr elem : list.all()) {
            Attrs e = elem.nested();
            String name = e.string(NfTablesUapi.NFTA_EXPR_NAME);
            if (name == null) {
                throw new IllegalArgumentException("an expression without a name");
            }
            Attrs.Attr data = e.find(NfTablesUapi.NFTA_EXPR_DATA);
            Attrs attrs = data == null ? Attrs.parse(ByteBuffer.allocate(0)) : data.nested();
            out.add(modelled(name) ? decode(name, attrs) : new Opaque(name, Bytes.of(data == null ? new byte[0] : data.bytes())));
        }
        return out;
    }

    /** Whether {@link #decode} knows the expression type; others are read as {@link Opaque}. */
    static boolean modelled(String name) {
        return switch (name) {
            case "payload", "cmp", "meta", "immediate", "lookup", "numgen", "hash", "ct", "nat", "masq", "fib", "counter", "dynset",
                 "bitwise", "byteorder", "reject" -> true;
            default -> false;
        };
    }

    public static Expr decode(String name, Attrs a) {
        return switch (name) {
            case "payload" -> Payload.decode(a);
            case "cmp" -> Cmp.decode(a);
            case "meta" -> Meta.decode(a);
            case "immediate" -> Immediate.decode(a);
            case "lookup" -> Lookup.decode(a);
            case "numgen" -> Numgen.decode(a);
            case "hash" -> Hash.decode(a);
            case "ct" -> Ct.decode(a);
            case "nat" -> Nat.decode(a);
            case "masq" -> Masq.decode(a);
            case "fib" -> Fib.decode(a);
            case "counter" -> Counter.decode(a);
            case "dynset" -> Dynset.decode(a);
            case "bitwise" -> Bitwise.decode(a);
            case "byteorder" -> Byteorder.decode(a);
            case "reject" -> Reject.decode(a);
            default -> throw new IllegalArgumentException("nf_tables expression '" + name + "' is not modelled; read it as Opaque");
        };
    }
}
