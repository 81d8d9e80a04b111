package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;

/** Compares register {@code sreg} with constant {@code data}; the rule stops when false. */
public record Cmp(int sreg, Op op, Bytes data) implements Expr {
    public static final int NFTA_CMP_SREG = 1;
    public static final int NFTA_CMP_OP = 2;
    public static final int NFTA_CMP_DATA = 3;

    /** enum nft_cmp_ops. */
    public enum Op {
        EQ("=="), NEQ("!="), LT("<"), LTE("<="), GT(">"), GTE(">=");

        private final String symbol;

        Op(String symbol) {
            this.symbol = symbol;
        }

        public String symbol() {
            return symbol;
        }
    }

    public static Cmp eq(int sreg, Bytes data) {
        return new Cmp(sreg, Op.EQ, data);
    }

    @Override
    public String name() {
        return "cmp";
    }

    @Override
    public void encode(MessageWriter w) {
        w.putBe32(NFTA_CMP_SREG, sreg);
        w.putBe32(NFTA_CMP_OP, op.ordinal());
        Data.encode(w, NFTA_CMP_DATA, Data.value(data));
    }

    public static Cmp decode(Attrs a) {
        int op = a.be32(NFTA_CMP_OP, 0);
        if (op < 0 || op >= Op.values().length) {
            throw new IllegalArgumentException("cmp operation " + op + " is not one of the kernel's");
        }
        return new Cmp(a.be32(NFTA_CMP_SREG, 0), Op.values()[op], Data.decodeValue(a.nested(NFTA_CMP_DATA), "cmp data").bytes());
    }
}
