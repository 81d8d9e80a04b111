package io.nftproxy.netlink.nft;

import java.util.Objects;

/**
 * An element of a set declared with a counter, as a dump reads it: its key, its data in a map
 * (null in a set), and what its counter holds. Kept apart from {@link SetElement}, which is what
 * is written and compared, so that counts never make two equal elements differ.
 */
public record CountedElement(Bytes key, Data data, long packets, long bytes) {
    public CountedElement {
        Objects.requireNonNull(key, "key");
    }
}
