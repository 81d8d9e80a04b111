package io.nftproxy.proxy.render;

import java.util.Map;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.SetElement;

/**
 * A set or map and its elements keyed by element key. {@code managed} is false for sets whose
 * elements the kernel writes itself (session affinity): we create them but never touch their
 * elements.
 */
public record DesiredSet(NftSet set, Map<Bytes, SetElement> elements, boolean managed) {
    public DesiredSet {
        elements = Map.copyOf(elements);
    }
}
