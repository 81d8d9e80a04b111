package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/** A number in [offset, offset + modulus): random or incremental. Loaded into {@code dreg} in host order. */
public record Numgen(int dreg, int modulus, int type, int offset) implements Expr {
    public static final int NFTA_NG_DREG = 1;
    public static final int NFTA_NG_MODULUS = 2;
    public static final int NFTA_NG_TYPE = 3;
    public static final int NFTA_NG_OFFSET = 4;
    public static final int NFT_NG_INCREMENTAL = 0;
    public static final int NFT_NG_RANDOM = 1;

    public static Numgen random(int dreg, int modulus) {
        return new Numgen(dreg, modulus, NFT_NG_RANDOM, 0);
    }

    @Override
    public String name() {
        return "numgen";
    }

    @Override
    public void encode(MessageWriter w) {
        w.putBe32(NFTA_NG_DREG, dreg);
        w.putBe32(NFTA_NG_MODULUS, modulus);
        w.putBe32(NFTA_NG_TYPE, type);
        if (offset != 0) {
            w.putBe32(NFTA_NG_OFFSET, offset);
        }
    }

    public static Numgen decode(Attrs a) {
        return new Numgen(a.be32(NFTA_NG_DREG, 0), a.be32(NFTA_NG_MODULUS, 0), a.be32(NFTA_NG_TYPE, 0),
                a.be32(NFTA_NG_OFFSET, 0));
    }
}
