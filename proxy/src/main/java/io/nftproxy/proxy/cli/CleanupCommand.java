package io.nftproxy.proxy.cli;

import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.iptables.IptablesSyncer;

/** Removes everything nftproxy created: its tables, in one transaction. */
@Command(name = "cleanup", mixinStandardHelpOptions = true, description = "Delete everything nftproxy created.")
final class CleanupCommand implements Callable<Integer> {
    @Mixin
    NetnsOption ns = new NetnsOption();

    @picocli.CommandLine.Option(names = "--mode", paramLabel = "nftables|iptables", defaultValue = "nftables",
            description = "What to remove: our nf_tables tables, or the iptables reference backend's KUBE-* chains.")
    String mode;

    @Override
    public Integer call() throws Exception {
        if ("iptables".equals(mode)) {
            new IptablesSyncer(
                    ProxyConfig.defaults("cleanup"), ns.netns).cleanup();
            System.out.println("removed the KUBE-* chains and their jumps (iptables and ip6tables)");
            return 0;
        }
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
