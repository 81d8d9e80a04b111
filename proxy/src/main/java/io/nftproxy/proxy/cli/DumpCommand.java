package io.nftproxy.proxy.cli;

import java.util.List;
import java.util.concurrent.Callable;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.trace.KernelServiceView;
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

    @Option(names = "--service", paramLabel = "NAMESPACE/NAME", description = "Instead of the ruleset: what the kernel"
            + " does for this service, read from our tables alone: each frontend, its endpoints by index, traffic policy,"
            + " ClientIP affinity, masquerading, source ranges, or why it is rejected or dropped.")
    String service;

    @Override
    public Integer call() throws Exception {
        if (service != null) {
            return service();
        }
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
    private int service() throws Exception {
        String[] nn = service.split("/", -1);
        if (nn.length != 2 || nn[0].isEmpty() || nn[1].isEmpty()) {
            System.err.println("nftproxy: --service " + service + ": not NAMESPACE/NAME");
            return 2;
        }
        try (NftClient c = NftClient.open(ns.namespace())) {
            List<KernelServiceView.Frontend> frontends = new KernelServiceView(c, c, ns.table).of(service);
            if (frontends.isEmpty()) {
                System.err.println("nftproxy: no element of table " + ns.table + (ns.netns == null ? "" : " in namespace " + ns.netns)
                        + " names service " + service + " (no such service, or nothing synced yet)");
                return 3;
            }
            System.out.println("service " + service + ", as table " + ns.table + " holds it:");
            for (KernelServiceView.Frontend f : frontends) {
                System.out.println("  " + f.where() + " (" + f.kind() + (f.port().isEmpty() ? "" : ", port " + f.port()) + ")");
                f.facts().forEach(x -> System.out.println("    " + x));
            }
        }
        return 0;
    }
}
