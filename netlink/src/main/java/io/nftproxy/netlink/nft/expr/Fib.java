package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/** A routing (FIB) lookup, e.g. {@code fib daddr type local}: the address type of the destination. */
public record Fib(int dreg, int result, int flags) implements Expr {
    public static final int NFTA_FIB_DREG = 1;
    public static final int NFTA_FIB_RESULT = 2;
    public static final int NFTA_FIB_FLAGS = 3;

    public static final int NFT_FIB_RESULT_OIF = 1;
    public static final int NFT_FIB_RESULT_OIFNAME = 2;
    public static final int NFT_FIB_RESULT_ADDRTYPE = 3;

    public static final int NFTA_FIB_F_SADDR = 1;
    public static final int NFTA_FIB_F_DADDR = 2;
    public static final int NFTA_FIB_F_MARK = 4;
    public static final int NFTA_FIB_F_IIF = 8;
    public static final int NFTA_FIB_F_OIF = 16;

    /** RTN_LOCAL: the address belongs to this host. */
    public static final int RTN_LOCAL = 2;

    public static Fib daddrType(int dreg) {
        return new Fib(dreg, NFT_FIB_RESULT_ADDRTYPE, NFTA_FIB_F_DADDR);
    }

    @Override
    public String name() {
        return "fib";
    }

    @Override
    public void encode(MessageWriter w) {
        w.putBe32(NFTA_FIB_DREG, dreg);
        w.putBe32(NFTA_FIB_RESULT, result);
        w.putBe32(NFTA_FIB_FLAGS, flags);
    }

    public static Fib decode(Attrs a) {
        return new Fib(a.be32(NFTA_FIB_DREG, 0), a.be32(NFTA_FIB_RESULT, 0), a.be32(NFTA_FIB_FLAGS, 0));
    }
}
