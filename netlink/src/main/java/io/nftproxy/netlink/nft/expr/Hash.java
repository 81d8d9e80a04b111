package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/**
 * A hash in [offset, offset + modulus), loaded into {@code dreg} in host order: Jenkins' hash of
 * the {@code len} bytes at {@code sreg} with {@code seed} ({@code jhash ip saddr . th sport mod M
 * seed S}), the same on every machine for the same bytes and seed; or the kernel's symmetric hash
 * of the flow ({@code symhash}: no source, the same both ways). {@code len} counts a concatenation's
 * fields with their register padding (an address and a port: 8).
 */
public record Hash(int type, int sreg, int dreg, int len, int modulus, int seed, int offset) implements Expr {
    public static final int NFTA_HASH_SREG = 1;
    public static final int NFTA_HASH_DREG = 2;
    public static final int NFTA_HASH_LEN = 3;
    public static final int NFTA_HASH_MODULUS = 4;
    public static final int NFTA_HASH_SEED = 5;
    public static final int NFTA_HASH_OFFSET = 6;
    public static final int NFTA_HASH_TYPE = 7;
    public static final int NFT_HASH_JENKINS = 0;
    public static final int NFT_HASH_SYM = 1;

    /** Jenkins' hash of {@code len} bytes at {@code sreg}, modulo {@code modulus}, into {@code dreg}. */
    public static Hash jenkins(int sreg, int len, int dreg, int modulus, int seed) {
        return new Hash(NFT_HASH_JENKINS, sreg, dreg, len, modulus, seed, 0);
    }

    /** The flow's symmetric hash modulo {@code modulus}, into {@code dreg}. */
    public static Hash symmetric(int dreg, int modulus) {
        return new Hash(NFT_HASH_SYM, 0, dreg, 0, modulus, 0, 0);
    }

    @Override
    public String name() {
        return "hash";
    }

    @Override
    public void encode(MessageWriter w) {
        // As libnftnl sends them: a symmetric hash has no source, length or seed.
        if (type == NFT_HASH_JENKINS) {
            w.putBe32(NFTA_HASH_SREG, sreg);
        }
        w.putBe32(NFTA_HASH_DREG, dreg);
        if (type == NFT_HASH_JENKINS) {
            w.putBe32(NFTA_HASH_LEN, len);
        }
        w.putBe32(NFTA_HASH_MODULUS, modulus);
        if (type == NFT_HASH_JENKINS) {
            w.putBe32(NFTA_HASH_SEED, seed);
        }
        if (offset != 0) {
            w.putBe32(NFTA_HASH_OFFSET, offset);
        }
        w.putBe32(NFTA_HASH_TYPE, type);
    }

    public static Hash decode(Attrs a) {
        return new Hash(a.be32(NFTA_HASH_TYPE, NFT_HASH_JENKINS), a.be32(NFTA_HASH_SREG, 0), a.be32(NFTA_HASH_DREG, 0),
                a.be32(NFTA_HASH_LEN, 0), a.be32(NFTA_HASH_MODULUS, 0), a.be32(NFTA_HASH_SEED, 0), a.be32(NFTA_HASH_OFFSET, 0));
    }
}
