package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/** Rejects the packet: TCP reset, or an ICMP(v6) / family-neutral ICMPX unreachable with a code. */
public record Reject(int type, int code) implements Expr {
    public static final int NFTA_REJECT_TYPE = 1;
    public static final int NFTA_REJECT_ICMP_CODE = 2;

    public static final int NFT_REJECT_ICMP_UNREACH = 0;
    public static final int NFT_REJECT_TCP_RST = 1;
    public static final int NFT_REJECT_ICMPX_UNREACH = 2;

    public static final int NFT_REJECT_ICMPX_NO_ROUTE = 0;
    public static final int NFT_REJECT_ICMPX_PORT_UNREACH = 1;
    public static final int NFT_REJECT_ICMPX_HOST_UNREACH = 2;
    public static final int NFT_REJECT_ICMPX_ADMIN_PROHIBITED = 3;

    // ICMP destination-unreachable codes (linux/icmp.h), and ICMPv6's (linux/icmpv6.h).
    public static final int ICMP_NET_UNREACH = 0;
    public static final int ICMP_HOST_UNREACH = 1;
    public static final int ICMP_PROT_UNREACH = 2;
    public static final int ICMP_PORT_UNREACH = 3;
    public static final int ICMP_NET_ANO = 9;
    public static final int ICMP_HOST_ANO = 10;
    public static final int ICMP_PKT_FILTERED = 13;
    public static final int ICMPV6_NOROUTE = 0;
    public static final int ICMPV6_ADM_PROHIBITED = 1;
    public static final int ICMPV6_ADDR_UNREACH = 3;
    public static final int ICMPV6_PORT_UNREACH = 4;

    public static Reject tcpReset() {
        return new Reject(NFT_REJECT_TCP_RST, 0);
    }

    public static Reject icmpx(int code) {
        return new Reject(NFT_REJECT_ICMPX_UNREACH, code);
    }

    @Override
    public String name() {
        return "reject";
    }

    @Override
    public void encode(MessageWriter w) {
        w.putBe32(NFTA_REJECT_TYPE, type);
        w.putU8(NFTA_REJECT_ICMP_CODE, code);
    }

    public static Reject decode(Attrs a) {
        return new Reject(a.be32(NFTA_REJECT_TYPE, 0), a.u8(NFTA_REJECT_ICMP_CODE, 0));
    }
}
