package io.nftproxy.proxy.cli;

import io.nftproxy.ffi.NetNamespace;
import picocli.CommandLine.Option;

/** --netns: program another network namespace than our own. */
final class NetnsOption {
    @Option(names = "--netns", paramLabel = "NAME", description = "Work in the network namespace /run/netns/NAME.")
    String netns;

    @Option(names = "--table", paramLabel = "NAME", defaultValue = "nftproxy",
            description = "Name of our nf_tables tables (default: ${DEFAULT-VALUE}).")
    String table;

    NetNamespace namespace() {
        return netns == null ? null : NetNamespace.named(netns);
    }
}
