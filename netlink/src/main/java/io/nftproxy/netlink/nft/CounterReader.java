package io.nftproxy.netlink.nft;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Reads the counters of a set's elements, in one dump of the set or by key: implemented by
 * {@link io.nftproxy.netlink.nft.client.NftClient} and by {@link io.nftproxy.netlink.testing.FakeNfTables}.
 */
public interface CounterReader {
    /** Every element of the set with its counter; ENOENT when the set does not exist. */
    List<CountedElement> countedElements(Family family, String table, String set) throws NftException;

    /**
     * Every element of the set with its counter, where the caller holds {@code expected} of them
     * (-1: not known); the kernel's client reads a large set once when it finds that many, twice
     * otherwise. This default ignores the count.
     */
    default List<CountedElement> countedElements(Family family, String table, String set, int expected) throws NftException {
        return countedElements(family, table, set);
    }

    /**
     * The elements of the set with these keys, with their counters; a key the set does not hold
     * is left out. ENOENT when the set does not exist. This default dumps the set and keeps the
     * keys asked; the kernel's client asks for each key instead.
     */
    default List<CountedElement> countedElements(Family family, String table, String set, List<Bytes> keys) throws NftException {
        Set<Bytes> wanted = new HashSet<>(keys);
        return countedElements(family, table, set).stream().filter(e -> wanted.contains(e.key())).toList();
    }
}
