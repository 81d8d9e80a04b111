package io.nftproxy.netlink.nft;

import java.util.List;

/**
 * Reads the counters of a set's elements in one dump (no request per element): implemented by
 * {@link io.nftproxy.netlink.nft.client.NftClient} and by {@link io.nftproxy.netlink.testing.FakeNfTables}.
 */
public interface CounterReader {
    /** Every element of the set with its counter; ENOENT when the set does not exist. */
    List<CountedElement> countedElements(Family family, String table, String set) throws NftException;
}
