package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/**
 * Source or destination NAT to the address (and port) held in registers. A register of 0 means
 * "not given". {@code family} is the address family of the registers (NFPROTO_IPV4 or _IPV6).
 */
public record Nat(int type, int family, int regAddrMin, int regAddrMax, int regProtoMin, int regProtoMax, int flags)
        implements Expr {
    public static final int NFTA_NAT_TYPE = 1;
    public static final int NFTA_NAT_FAMILY = 2;
    public static final int NFTA_NAT_REG_ADDR_MIN = 3;
    public static final int NFTA_NAT_REG_ADDR_MAX = 4;
    public static final int NFTA_NAT_REG_PROTO_MIN = 5;
    public static final int NFTA_NAT_REG_PROTO_MAX = 6;
    public static final int NFTA_NAT_FLAGS = 7;

    public static final int NFT_NAT_SNAT = 0;
    public static final int NFT_NAT_DNAT = 1;

    public static final int NF_NAT_RANGE_MAP_IPS = 1;
    public static final int NF_NAT_RANGE_PROTO_SPECIFIED = 2;
    public static final int NF_NAT_RANGE_PROTO_RANDOM = 4;
    public static final int NF_NAT_RANGE_PERSISTENT = 8;
    public static final int NF_NAT_RANGE_PROTO_RANDOM_FULLY = 16;

    /**
     * The kernel's canonical form, which is what it dumps: a missing max register is the min
     * register, and a given address or port register implies MAP_IPS or PROTO_SPECIFIED.
     */
    public Nat {
        if (regAddrMax == 0) {
            regAddrMax = regAddrMin;
        }
        if (regProtoMax == 0) {
            regProtoMax = regProtoMin;
        }
        if (regAddrMin != 0) {
            flags |= NF_NAT_RANGE_MAP_IPS;
        }
        if (regProtoMin != 0) {
            flags |= NF_NAT_RANGE_PROTO_SPECIFIED;
        }
    }

    /** DNAT to address in {@code regAddr} and port in {@code regPort} (0 to keep the port). */
    public static Nat dnat(int family, int regAddr, int regPort) {
        int flags = NF_NAT_RANGE_MAP_IPS | (regPort != 0 ? NF_NAT_RANGE_PROTO_SPECIFIED : 0);
        return new Nat(NFT_NAT_DNAT, family, regAddr, 0, regPort, 0, flags);
    }

    @Override
    public String name() {
        return "nat";
    }

    @Override
    public void encode(MessageWriter w) {
        w.putBe32(NFTA_NAT_TYPE, type);
        w.putBe32(NFTA_NAT_FAMILY, family);
        if (regAddrMin != 0) {
            w.putBe32(NFTA_NAT_REG_ADDR_MIN, regAddrMin);
        }
        // As nft writes it: max registers and the implied MAP_IPS flag only when they add something.
        if (regAddrMax != regAddrMin) {
            w.putBe32(NFTA_NAT_REG_ADDR_MAX, regAddrMax);
        }
        if (regProtoMin != 0) {
            w.putBe32(NFTA_NAT_REG_PROTO_MIN, regProtoMin);
        }
        if (regProtoMax != regProtoMin) {
            w.putBe32(NFTA_NAT_REG_PROTO_MAX, regProtoMax);
        }
        int explicit = regAddrMin != 0 ? flags & ~NF_NAT_RANGE_MAP_IPS : flags;
        if (explicit != 0) {
            w.putBe32(NFTA_NAT_FLAGS, explicit);
        }
    }

    public static Nat decode(Attrs a) {
        return new Nat(a.be32(NFTA_NAT_TYPE, 0), a.be32(NFTA_NAT_FAMILY, 0), a.be32(NFTA_NAT_REG_ADDR_MIN, 0),
                a.be32(NFTA_NAT_REG_ADDR_MAX, 0), a.be32(NFTA_NAT_REG_PROTO_MIN, 0),
                a.be32(NFTA_NAT_REG_PROTO_MAX, 0), a.be32(NFTA_NAT_FLAGS, 0));
    }
}
