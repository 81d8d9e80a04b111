package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/**
 * Loads a conntrack field into {@code register} (or stores it, with {@code set}). {@code direction}
 * is -1 for keys without one, else 0 (original) or 1 (reply).
 */
public record Ct(int key, int register, int direction, boolean set) implements Expr {
    public static final int NFTA_CT_DREG = 1;
    public static final int NFTA_CT_KEY = 2;
    public static final int NFTA_CT_DIRECTION = 3;
    public static final int NFTA_CT_SREG = 4;

    public static final int NFT_CT_STATE = 0;
    public static final int NFT_CT_DIRECTION = 1;
    public static final int NFT_CT_STATUS = 2;
    public static final int NFT_CT_MARK = 3;
    public static final int NFT_CT_SRC = 8;
    public static final int NFT_CT_DST = 9;
    public static final int NFT_CT_PROTOCOL = 10;
    public static final int NFT_CT_PROTO_SRC = 11;
    public static final int NFT_CT_PROTO_DST = 12;
    /** The address by family: nft lists these inside a concatenation, where it cannot size NFT_CT_DST. */
    public static final int NFT_CT_SRC_IP = 19;
    public static final int NFT_CT_DST_IP = 20;
    public static final int NFT_CT_SRC_IP6 = 21;
    public static final int NFT_CT_DST_IP6 = 22;

    private static final String[] NAMES = {"state", "direction", "status", "mark", "secmark", "expiration", "helper",
        "l3proto", "saddr", "daddr", "protocol", "proto-src", "proto-dst", "label", "packets", "bytes", "avgpkt",
        "zone", "event", "ip saddr", "ip daddr", "ip6 saddr", "ip6 daddr", "id"};

    /** ct state bits (NF_CT_STATE_*_BIT). */
    public static final int STATE_INVALID = 1;
    public static final int STATE_ESTABLISHED = 2;
    public static final int STATE_RELATED = 4;
    public static final int STATE_NEW = 8;
    public static final int STATE_UNTRACKED = 64;

    /** ct status bits (IPS_*). */
    public static final int STATUS_DNAT = 1 << 5;
    public static final int STATUS_SNAT = 1 << 4;

    public static Ct load(int key, int dreg) {
        return new Ct(key, dreg, -1, false);
    }

    public static String keyName(int key) {
        return key >= 0 && key < NAMES.length ? NAMES[key] : "key" + key;
    }

    @Override
    public String name() {
        return "ct";
    }

    @Override
    public void encode(MessageWriter w) {
        if (set) {
            w.putBe32(NFTA_CT_SREG, register);
        } else {
            w.putBe32(NFTA_CT_DREG, register);
        }
        w.putBe32(NFTA_CT_KEY, key);
        if (direction >= 0) {
            w.putU8(NFTA_CT_DIRECTION, direction);
        }
    }

    public static Ct decode(Attrs a) {
        boolean set = a.has(NFTA_CT_SREG);
        return new Ct(a.be32(NFTA_CT_KEY, 0), a.be32(set ? NFTA_CT_SREG : NFTA_CT_DREG, 0),
                a.u8(NFTA_CT_DIRECTION, -1), set);
    }
}
