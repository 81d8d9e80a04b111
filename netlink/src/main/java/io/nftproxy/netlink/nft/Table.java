package io.nftproxy.netlink.nft;

import java.util.Objects;

/** An nf_tables table. */
public record Table(Family family, String name, int flags) implements NftObject {
    public Table {
        Objects.requireNonNull(family, "family");
        NftSyntax.checkName("table", name);
    }

    public Table(Family family, String name) {
        this(family, name, 0);
    }

    @Override
    public String table() {
        return name;
    }
}
