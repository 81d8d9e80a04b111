package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/**
 * Loads packet metadata into {@code register}, or with {@code set} stores the register into it
 * (e.g. {@code meta mark set}).
 */
public record Meta(int key, int register, boolean set) implements Expr {
    public static final int NFTA_META_DREG = 1;
    public static final int NFTA_META_KEY = 2;
    public static final int NFTA_META_SREG = 3;

    public static final int NFT_META_LEN = 0;
    public static final int NFT_META_PROTOCOL = 1;
    public static final int NFT_META_MARK = 3;
    public static final int NFT_META_IIF = 4;
    public static final int NFT_META_OIF = 5;
    public static final int NFT_META_IIFNAME = 6;
    public static final int NFT_META_OIFNAME = 7;
    public static final int NFT_META_SKUID = 10;
    public static final int NFT_META_NFTRACE = 12;
    public static final int NFT_META_NFPROTO = 15;
    public static final int NFT_META_L4PROTO = 16;
    public static final int NFT_META_PKTTYPE = 19;

    private static final String[] NAMES = {"length", "protocol", "priority", "mark", "iif", "oif", "iifname",
        "oifname", "iiftype", "oiftype", "skuid", "skgid", "nftrace", "rtclassid", "secmark", "nfproto", "l4proto",
        "ibrname", "obrname", "pkttype", "cpu", "iifgroup", "oifgroup", "cgroup", "random"};

    public static Meta load(int key, int dreg) {
        return new Meta(key, dreg, false);
    }

    public static Meta store(int key, int sreg) {
        return new Meta(key, sreg, true);
    }

    public static String keyName(int key) {
        return key >= 0 && key < NAMES.length ? NAMES[key] : "key" + key;
    }

    @Override
    public String name() {
        return "meta";
    }

    @Override
    public void encode(MessageWriter w) {
        w.putBe32(NFTA_META_KEY, key);
        w.putBe32(set ? NFTA_META_SREG : NFTA_META_DREG, register);
    }

    public static Meta decode(Attrs a) {
        boolean set = a.has(NFTA_META_SREG);
        return new Meta(a.be32(NFTA_META_KEY, 0), a.be32(set ? NFTA_META_SREG : NFTA_META_DREG, 0), set);
    }
}
