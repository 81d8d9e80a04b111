package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/** Masquerade: SNAT to the outgoing interface's address. Flags are NF_NAT_RANGE_* (e.g. random-fully). */
public record Masq(int flags, int regProtoMin, int regProtoMax) implements Expr {
    public static final int NFTA_MASQ_FLAGS = 1;
    public static final int NFTA_MASQ_REG_PROTO_MIN = 2;
    public static final int NFTA_MASQ_REG_PROTO_MAX = 3;

    public static Masq plain() {
        return new Masq(0, 0, 0);
    }

    public static Masq fullyRandom() {
        return new Masq(Nat.NF_NAT_RANGE_PROTO_RANDOM_FULLY, 0, 0);
    }

    @Override
    public String name() {
        return "masq";
    }

    @Override
    public void encode(MessageWriter w) {
        if (flags != 0) {
            w.putBe32(NFTA_MASQ_FLAGS, flags);
        }
        if (regProtoMin != 0) {
            w.putBe32(NFTA_MASQ_REG_PROTO_MIN, regProtoMin);
        }
        if (regProtoMax != 0) {
            w.putBe32(NFTA_MASQ_REG_PROTO_MAX, regProtoMax);
        }
    }

    public static Masq decode(Attrs a) {
        return new Masq(a.be32(NFTA_MASQ_FLAGS, 0), a.be32(NFTA_MASQ_REG_PROTO_MIN, 0),
                a.be32(NFTA_MASQ_REG_PROTO_MAX, 0));
    }
}
