package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/**
 * Adds or updates an element of a named set from the packet path (e.g. session affinity:
 * {@code update @aff { ip saddr timeout 10800s }}). {@code sregData} is 0 for a set; timeout in ms,
 * 0 for the set's default.
 */
public record Dynset(String set, int op, int sregKey, int sregData, long timeoutMs) implements Expr {
    public static final int NFTA_DYNSET_SET_NAME = 1;
    public static final int NFTA_DYNSET_OP = 3;
    public static final int NFTA_DYNSET_SREG_KEY = 4;
    public static final int NFTA_DYNSET_SREG_DATA = 5;
    public static final int NFTA_DYNSET_TIMEOUT = 6;

    public static final int NFT_DYNSET_OP_ADD = 0;
    public static final int NFT_DYNSET_OP_UPDATE = 1;
    public static final int NFT_DYNSET_OP_DELETE = 2;

    @Override
    public String name() {
        return "dynset";
    }

    @Override
    public void encode(MessageWriter w) {
        w.putString(NFTA_DYNSET_SET_NAME, set);
        w.putBe32(NFTA_DYNSET_OP, op);
        w.putBe32(NFTA_DYNSET_SREG_KEY, sregKey);
        if (sregData != 0) {
            w.putBe32(NFTA_DYNSET_SREG_DATA, sregData);
        }
        if (timeoutMs != 0) {
            w.putBe64(NFTA_DYNSET_TIMEOUT, timeoutMs);
        }
    }

    public static Dynset decode(Attrs a) {
        return new Dynset(a.string(NFTA_DYNSET_SET_NAME), a.be32(NFTA_DYNSET_OP, 0), a.be32(NFTA_DYNSET_SREG_KEY, 0),
                a.be32(NFTA_DYNSET_SREG_DATA, 0), a.be64(NFTA_DYNSET_TIMEOUT, 0));
    }
}
