package io.nftproxy.proxy.cli;

import java.util.concurrent.Callable;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Removes everything nftproxy created: its tables, in one transaction. */
@Command(name = "cleanup", mixinStandardHelpOptions = true, description = "Delete everything nftproxy created.")
final class CleanupCommand implements Callable<Integer> {
    @Mixin
    NetnsOption ns = new NetnsOption();

    @Override
    public Integer call() throws Exception {
        try (NftClient c = NftClient.open(ns.namespace())) {
            Transaction tx = new Transaction();
            for (Family f : new Family[] {Family.IP, Family.IP6}) {
                // add then delete: removes the table whether or not it exists, on any kernel.
                Table t = new Table(f, ns.table);
                tx.add(t).delete(t);
            }
            c.commit(tx);
        }
        System.out.println("removed tables ip " + ns.table + " and ip6 " + ns.table);
        return 0;
    }
}
