package io.nftproxy.netlink.nft;

/** Anything a transaction can add, flush or delete. */
public sealed interface NftObject permits Table, Chain, Rule, NftSet, Elements {
    Family family();

    /** The table this object lives in (the table's own name for a table). */
    String table();
}
