package io.nftproxy.netlink.nft;

import java.util.List;

/**
 * What a program that owns tables needs of nf_tables: commit a transaction atomically, read a
 * table back, and the ruleset's generation id. {@link io.nftproxy.netlink.nft.client.NftClient} is the kernel's;
 * {@link io.nftproxy.netlink.testing.FakeNfTables} an in-memory one for tests without privileges.
 */
public interface NftKernel {
    /** Applies every operation, or none: a refusal is a {@link TransactionException} naming the operation. */
    CommitStats commit(Transaction tx) throws NftException;

    /** Everything in one table; ENOENT when it does not exist. */
    TableContents readTable(Family family, String table) throws NftException;

    boolean hasTable(Family family, String table) throws NftException;

    /** The rules of one chain, in order; ENOENT when the table or the chain does not exist. */
    default List<Rule> listRules(Family family, String table, String chain) throws NftException {
        return readTable(family, table).rulesOf(chain);
    }

    /** The chains of one table (without their rules); ENOENT when the table does not exist. */
    default List<Chain> listChains(Family family, String table) throws NftException {
        return readTable(family, table).chains();
    }

    /** The sets of one table (without their elements); ENOENT when the table does not exist. */
    default List<NftSet> listSets(Family family, String table) throws NftException {
        return readTable(family, table).sets();
    }

    /** The elements of one set; ENOENT when the table or the set does not exist. */
    List<SetElement> listElements(Family family, String table, String set) throws NftException;

    /** Changes with every commit that changed something. */
    long generation() throws NftException;
}
