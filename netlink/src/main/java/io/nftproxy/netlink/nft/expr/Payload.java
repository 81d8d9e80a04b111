package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/** Loads {@code len} bytes at {@code offset} from a packet header into register {@code dreg}. */
public record Payload(int dreg, int base, int offset, int len) implements Expr {
    public static final int NFTA_PAYLOAD_DREG = 1;
    public static final int NFTA_PAYLOAD_BASE = 2;
    public static final int NFTA_PAYLOAD_OFFSET = 3;
    public static final int NFTA_PAYLOAD_LEN = 4;

    public static final int NFT_PAYLOAD_LL_HEADER = 0;
    public static final int NFT_PAYLOAD_NETWORK_HEADER = 1;
    public static final int NFT_PAYLOAD_TRANSPORT_HEADER = 2;

    public static Payload network(int dreg, int offset, int len) {
        return new Payload(dreg, NFT_PAYLOAD_NETWORK_HEADER, offset, len);
    }

    public static Payload transport(int dreg, int offset, int len) {
        return new Payload(dreg, NFT_PAYLOAD_TRANSPORT_HEADER, offset, len);
    }

    @Override
    public String name() {
        return "payload";
    }

    @Override
    public void encode(MessageWriter w) {
        w.putBe32(NFTA_PAYLOAD_DREG, dreg);
        w.putBe32(NFTA_PAYLOAD_BASE, base);
        w.putBe32(NFTA_PAYLOAD_OFFSET, offset);
        w.putBe32(NFTA_PAYLOAD_LEN, len);
    }

    public static Payload decode(Attrs a) {
        return new Payload(a.be32(NFTA_PAYLOAD_DREG, 0), a.be32(NFTA_PAYLOAD_BASE, 0),
                a.be32(NFTA_PAYLOAD_OFFSET, 0), a.be32(NFTA_PAYLOAD_LEN, 0));
    }
}
