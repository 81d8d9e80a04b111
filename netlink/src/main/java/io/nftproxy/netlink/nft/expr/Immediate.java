package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.Verdict;

/** Puts a constant in a register; a verdict goes to the verdict register (accept, drop, jump…). */
public record Immediate(int dreg, Data data) implements Expr {
    public static final int NFTA_IMMEDIATE_DREG = 1;
    public static final int NFTA_IMMEDIATE_DATA = 2;

    public static Immediate verdict(Verdict v) {
        return new Immediate(NfTablesUapi.NFT_REG_VERDICT, v);
    }

    public static Immediate value(int dreg, Bytes b) {
        return new Immediate(dreg, Data.value(b));
    }

    @Override
    public String name() {
        return "immediate";
    }

    @Override
    public void encode(MessageWriter w) {
        w.putBe32(NFTA_IMMEDIATE_DREG, dreg);
        Data.encode(w, NFTA_IMMEDIATE_DATA, data);
    }

    public static Immediate decode(Attrs a) {
        return new Immediate(a.be32(NFTA_IMMEDIATE_DREG, 0), Data.decode(a.nested(NFTA_IMMEDIATE_DATA)));
    }
}
