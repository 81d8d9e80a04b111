package io.nftproxy.proxy.cli;

import java.util.concurrent.Callable;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.iptables.IptablesSyncer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Removes everything nftproxy created: its tables, in one transaction. */
@Command(name = "cleanup", mixinStandardHelpOptions = true, description = "Delete everything nftproxy created.")
final class CleanupCommand implements Callable<Integer> {
    @Mixin
    NetnsOption ns = new NetnsOption();

    @picocli.CommandLine.Option(names = "--mode", paramLabel = "nftables|iptables|all", defaultValue = "nftables",
            description = "What to remove: our nf_tables tables, the iptables reference backend's KUBE-* chains, or both.")
    String mode;

    @Override
    public Integer call() throws Exception {
        return switch (mode) {
            case "nftables" -> removeTables(ns.netns, ns.table);
            case "iptables" -> removeChains(ns.netns);
            case "all" -> cleanupEverything(ns.netns, ns.table);
            default -> {
                System.err.println("nftproxy: unknown cleanup --mode '" + mode + "' (expected nftables, iptables or all)");
                yield 2;
            }
        };
    }

    /** kube-proxy --cleanup: whatever either backend left (as kube-proxy removes its iptables, ipvs and nftables rules). */
    static int cleanupEverything(String netns, String table) throws Exception {
        int nft = removeTables(netns, table);
        try {
            removeChains(netns);
        } catch (RuntimeException e) {
            // no iptables on the node (the image has none): nothing of ours can be there either
            System.out.println("no iptables chains removed: " + e.getMessage());
        }
        return nft;
    }

    private static int removeChains(String netns) {
        new IptablesSyncer(ProxyConfig.defaults("cleanup"), netns).cleanup();
        System.out.println("removed the KUBE-* chains and their jumps (iptables and ip6tables)");
        return 0;
    }

    private static int removeTables(String netns, String table) throws Exception {
        try (NftClient c = NftClient.open(netns == null ? null : NetNamespace.named(netns))) {
            Transaction tx = new Transaction();
            for (Family f : new Family[] {Family.IP, Family.IP6}) {
                // add then delete: removes the table whether or not it exists, on any kernel.
                Table t = new Table(f, table);
                tx.add(t).delete(t);
            }
            c.commit(tx);
        }
        System.out.println("removed tables ip " + table + " and ip6 " + table);
        return 0;
    }
}
