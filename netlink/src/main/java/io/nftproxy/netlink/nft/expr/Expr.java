package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.MessageWriter;

/**
 * One nf_tables expression. Each type encodes its NFTA_EXPR_DATA attributes and has a static
 * {@code decode} beside it that reads exactly what {@code encode} writes.
 */
public sealed interface Expr permits Payload, Cmp, Meta, Immediate, Lookup, Numgen, Hash, Ct, Nat, Masq, Fib, Counter,
        Dynset, Bitwise, Byteorder, Reject, Opaque {

    /** The kernel's name of the expression type (NFTA_EXPR_NAME). */
    String name();

    /** Writes the attributes inside NFTA_EXPR_DATA. */
    void encode(MessageWriter w);
}
