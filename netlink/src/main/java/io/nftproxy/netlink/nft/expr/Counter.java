package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/** Counts packets and bytes. Written with zeros; read back with the kernel's counts. */
public record Counter(long bytes, long packets) implements Expr {
    public static final int NFTA_COUNTER_BYTES = 1;
    public static final int NFTA_COUNTER_PACKETS = 2;

    public static Counter zero() {
        return new Counter(0, 0);
    }

    @Override
    public String name() {
        return "counter";
    }

    @Override
    public void encode(MessageWriter w) {
        w.putBe64(NFTA_COUNTER_BYTES, bytes);
        w.putBe64(NFTA_COUNTER_PACKETS, packets);
    }

    public static Counter decode(Attrs a) {
        return new Counter(a.be64(NFTA_COUNTER_BYTES, 0), a.be64(NFTA_COUNTER_PACKETS, 0));
    }
}
