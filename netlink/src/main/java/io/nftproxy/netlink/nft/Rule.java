package io.nftproxy.netlink.nft;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

import io.nftproxy.netlink.nft.expr.Expr;

/**
 * A rule: expressions evaluated in order. {@code handle} is the kernel's id (0 when not yet known);
 * it addresses the rule for delete and replace and is not part of what the rule does.
 */
public record Rule(Family family, String table, String chain, List<Expr> exprs, String comment, long handle)
        implements NftObject {

    public Rule {
        Objects.requireNonNull(family, "family");
        NftSyntax.checkName("table", table);
        NftSyntax.checkName("chain", chain);
        exprs = List.copyOf(exprs);
        if (comment != null && comment.getBytes(StandardCharsets.UTF_8).length > 127) {
            throw new IllegalArgumentException("rule comment longer than 127 bytes: " + comment);
        }
    }

    public static Rule of(Family family, String table, String chain, List<Expr> exprs) {
        return new Rule(family, table, chain, exprs, null, 0);
    }

    public Rule withComment(String c) {
        return new Rule(family, table, chain, exprs, c, handle);
    }

    public Rule withHandle(long h) {
        return new Rule(family, table, chain, exprs, comment, h);
    }

    /** The same rule without its kernel handle, for comparing what rules do. */
    public Rule withoutHandle() {
        return handle == 0 ? this : withHandle(0);
    }
}
