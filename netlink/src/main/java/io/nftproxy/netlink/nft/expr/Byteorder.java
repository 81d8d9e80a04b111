package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/**
 * Converts {@code len} bytes of a register between host and network order in units of
 * {@code size} bytes. nft puts one before an ordered compare of a host-order value (numgen, mark):
 * the kernel's cmp compares bytes as memcmp does, so "&lt;" needs big-endian operands.
 */
public record Byteorder(int sreg, int dreg, int op, int len, int size) implements Expr {
    public static final int NFTA_BYTEORDER_SREG = 1;
    public static final int NFTA_BYTEORDER_DREG = 2;
    public static final int NFTA_BYTEORDER_OP = 3;
    public static final int NFTA_BYTEORDER_LEN = 4;
    public static final int NFTA_BYTEORDER_SIZE = 5;
    public static final int NFT_BYTEORDER_NTOH = 0;
    public static final int NFT_BYTEORDER_HTON = 1;

    public static Byteorder hton32(int reg) {
        return new Byteorder(reg, reg, NFT_BYTEORDER_HTON, 4, 4);
    }

    @Override
    public String name() {
        return "byteorder";
    }

    @Override
    public void encode(MessageWriter w) {
        w.putBe32(NFTA_BYTEORDER_SREG, sreg);
        w.putBe32(NFTA_BYTEORDER_DREG, dreg);
        w.putBe32(NFTA_BYTEORDER_OP, op);
        w.putBe32(NFTA_BYTEORDER_LEN, len);
        w.putBe32(NFTA_BYTEORDER_SIZE, size);
    }

    public static Byteorder decode(Attrs a) {
        return new Byteorder(a.be32(NFTA_BYTEORDER_SREG, 0), a.be32(NFTA_BYTEORDER_DREG, 0),
                a.be32(NFTA_BYTEORDER_OP, 0), a.be32(NFTA_BYTEORDER_LEN, 0), a.be32(NFTA_BYTEORDER_SIZE, 0));
    }
}
