package io.nftproxy.netlink.nft.expr;

import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.nft.Bytes;

/**
 * An expression of a type this library does not model (someone else's rule in a table we read):
 * kept as its name and the attributes of its NFTA_EXPR_DATA, as received, so that a dump of a
 * table holding it still reads, prints (as a comment naming it) and can be written back unchanged.
 */
public record Opaque(String name, Bytes data) implements Expr {
    @Override
    public void encode(MessageWriter w) {
        w.putRaw(data.toArray());
    }
}
