package io.nftproxy.netlink.nft;

import java.util.Objects;

/**
 * A chain. A base chain has a {@link Base} (type, hook, priority, policy) and sees packets; a
 * regular chain is only reached by jump or goto.
 */
public record Chain(Family family, String table, String name, Base base, String comment) implements NftObject {

    /** The hook attachment of a base chain. Type is "filter", "nat" or "route". */
    public record Base(String type, Hook hook, int priority, Verdict policy) {
        public Base {
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(hook, "hook");
            if (policy != null && policy.kind() != Verdict.Kind.ACCEPT && policy.kind() != Verdict.Kind.DROP) {
                throw new IllegalArgumentException("chain policy must be accept or drop, not " + policy);
            }
        }

        public Base(String type, Hook hook, int priority) {
            this(type, hook, priority, Verdict.ACCEPT);
        }
    }

    public Chain {
        Objects.requireNonNull(family, "family");
        NftSyntax.checkName("table", table);
        NftSyntax.checkName("chain", name);
    }

    public static Chain regular(Family family, String table, String name) {
        return new Chain(family, table, name, null, null);
    }

    public static Chain base(Family family, String table, String name, String type, Hook hook, int priority) {
        return new Chain(family, table, name, new Base(type, hook, priority), null);
    }

    public Chain withComment(String c) {
        return new Chain(family, table, name, base, c);
    }

    public boolean isBase() {
        return base != null;
    }
}
