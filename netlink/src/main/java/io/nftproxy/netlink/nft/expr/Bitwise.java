package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;

/** dreg = (sreg AND mask) XOR xor, over {@code len} bytes (the boolean form nft uses for "|", "&", "^"). */
public record Bitwise(int sreg, int dreg, int len, Bytes mask, Bytes xor) implements Expr {
    public static final int NFTA_BITWISE_SREG = 1;
    public static final int NFTA_BITWISE_DREG = 2;
    public static final int NFTA_BITWISE_LEN = 3;
    public static final int NFTA_BITWISE_MASK = 4;
    public static final int NFTA_BITWISE_XOR = 5;
    public static final int NFTA_BITWISE_OP = 6;
    public static final int NFT_BITWISE_BOOL = 0;

    public Bitwise {
        if (mask.length() != len || xor.length() != len) {
            throw new IllegalArgumentException("bitwise mask and xor must be " + len + " bytes");
        }
    }

    @Override
    public String name() {
        return "bitwise";
    }

    @Override
    public void encode(MessageWriter w) {
        w.putBe32(NFTA_BITWISE_SREG, sreg);
        w.putBe32(NFTA_BITWISE_DREG, dreg);
        w.putBe32(NFTA_BITWISE_OP, NFT_BITWISE_BOOL);
        w.putBe32(NFTA_BITWISE_LEN, len);
        Data.encode(w, NFTA_BITWISE_MASK, Data.value(mask));
        Data.encode(w, NFTA_BITWISE_XOR, Data.value(xor));
    }

    public static Bitwise decode(Attrs a) {
        int op = a.be32(NFTA_BITWISE_OP, NFT_BITWISE_BOOL);
        if (op != NFT_BITWISE_BOOL) {
            throw new IllegalArgumentException("bitwise shift operations are not supported (op " + op + ")");
        }
        return new Bitwise(a.be32(NFTA_BITWISE_SREG, 0), a.be32(NFTA_BITWISE_DREG, 0), a.be32(NFTA_BITWISE_LEN, 0),
                Data.decodeValue(a.nested(NFTA_BITWISE_MASK), "bitwise mask").bytes(),
                Data.decodeValue(a.nested(NFTA_BITWISE_XOR), "bitwise xor").bytes());
    }
}
