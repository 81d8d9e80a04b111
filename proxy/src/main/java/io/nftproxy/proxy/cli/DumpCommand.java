package io.nftproxy.proxy.cli;

import java.util.List;
import java.util.concurrent.Callable;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.client.NftClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Prints our ruleset as the kernel holds it, in nft syntax. */
@Command(name = "dump", mixinStandardHelpOptions = true,
        description = "Print our current ruleset, read back from the kernel, in nft syntax.")
final class DumpCommand implements Callable<Integer> {
    @Mixin
    NetnsOption ns = new NetnsOption();

    @Option(names = "--family", paramLabel = "ip|ip6", description = "Only this family (default: both).")
    String family;

    @Override
    public Integer call() throws Exception {
        List<Family> families = family == null ? List.of(Family.IP, Family.IP6) : List.of(Family.parse(family));
        try (NftClient c = NftClient.open(ns.namespace())) {
            boolean any = false;
            for (Family f : families) {
                if (c.hasTable(f, ns.table)) {
                    System.out.print(c.readTable(f, ns.table));
                    any = true;
                }
            }
            if (!any) {
                System.err.println("nftproxy: no " + ns.table + " table"
                        + (ns.netns == null ? "" : " in namespace " + ns.netns) + " (nothing synced yet?)");
                return 3;
            }
        }
        return 0;
    }
}
