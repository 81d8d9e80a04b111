package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/**
 * A hash in [offset, offset + modulus), loaded into {@code dreg} in host order: Jenkins' hash of
 * the {@code len} bytes at {@code sreg} with {@code seed} ({@code jhash ip saddr . th sport mod M
 * seed S}), the same on every machine for the same bytes and seed; or the kernel's symmetric hash
 * of the flow ({@code symhash}: no source, the same both ways). {@code len} counts a concatenation's
 * fields with their register padding (an address and a port: 8). {@code seed} null: none given,
 * the kernel draws one of its own (and a dump leaves it out), so two machines hash apart.
 */
public record Hash(int type, int sreg, int dreg, int len, int modulus, Integer seed, int offset) implements Expr {
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
        return new Hash(NFT_HASH_SYM, 0, dreg, 0, modulus, null, 0);
    }

    /** The same hash with {@code offset} added to it. */
    public Hash withOffset(int offset) {
        return new Hash(type, sreg, dreg, len, modulus, seed, offset);
    }

    @Override
    public String name() {
        return "hash";
    }

    @Override
    public void encode(MessageWriter w) {
        // As nft sends them: a symmetric hash has no source or length, a seed only when one is given,
        // the offset always.
        if (type == NFT_HASH_JENKINS) {
            w.putBe32(NFTA_HASH_SREG, sreg);
        }
        w.putBe32(NFTA_HASH_DREG, dreg);
        if (type == NFT_HASH_JENKINS) {
            w.putBe32(NFTA_HASH_LEN, len);
        }
        w.putBe32(NFTA_HASH_MODULUS, modulus);
        if (seed != null) {
            w.putBe32(NFTA_HASH_SEED, seed);
        }
        w.putBe32(NFTA_HASH_OFFSET, offset);
        w.putBe32(NFTA_HASH_TYPE, type);
    }

    public static Hash decode(Attrs a) {
        return new Hash(a.be32(NFTA_HASH_TYPE, NFT_HASH_JENKINS), a.be32(NFTA_HASH_SREG, 0), a.be32(NFTA_HASH_DREG, 0),
                a.be32(NFTA_HASH_LEN, 0), a.be32(NFTA_HASH_MODULUS, 0),
                a.find(NFTA_HASH_SEED) == null ? null : a.be32(NFTA_HASH_SEED, 0), a.be32(NFTA_HASH_OFFSET, 0));
    }
}
