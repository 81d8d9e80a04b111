package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/**
 * Looks register {@code sreg} up in a named set. With {@code dreg} set (a map), the element's data
 * is loaded there; a verdict map uses the verdict register (0). {@code dreg} -1 means a plain set
 * membership test; {@code invert} matches when absent.
 */
public record Lookup(String set, int sreg, int dreg, boolean invert) implements Expr {
    public static final int NFTA_LOOKUP_SET = 1;
    public static final int NFTA_LOOKUP_SREG = 2;
    public static final int NFTA_LOOKUP_DREG = 3;
    public static final int NFTA_LOOKUP_FLAGS = 5;
    public static final int NFT_LOOKUP_F_INV = 1;
    public static final int NO_DREG = -1;

    public static Lookup member(String set, int sreg) {
        return new Lookup(set, sreg, NO_DREG, false);
    }

    public static Lookup map(String set, int sreg, int dreg) {
        return new Lookup(set, sreg, dreg, false);
    }

    public Lookup withInvert() {
        return new Lookup(set, sreg, dreg, true);
    }

    @Override
    public String name() {
        return "lookup";
    }

    @Override
    public void encode(MessageWriter w) {
        w.putString(NFTA_LOOKUP_SET, set);
        w.putBe32(NFTA_LOOKUP_SREG, sreg);
        if (dreg != NO_DREG) {
            w.putBe32(NFTA_LOOKUP_DREG, dreg);
        }
        if (invert) {
            w.putBe32(NFTA_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
        }
    }

    public static Lookup decode(Attrs a) {
        return new Lookup(a.string(NFTA_LOOKUP_SET), a.be32(NFTA_LOOKUP_SREG, 0), a.be32(NFTA_LOOKUP_DREG, NO_DREG),
                (a.be32(NFTA_LOOKUP_FLAGS, 0) & NFT_LOOKUP_F_INV) != 0);
    }
}
