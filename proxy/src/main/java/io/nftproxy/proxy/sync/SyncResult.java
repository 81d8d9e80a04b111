package io.nftproxy.proxy.sync;

import java.util.List;

import io.nftproxy.netlink.nft.CommitStats;

/**
 * The outcome of one sync: whether it was full, the commit's cost, how many chains it changed,
 * what we now own, and the service ports left out because the kernel refused their objects.
 */
public record SyncResult(boolean full, CommitStats commit, int changedChains, int chains, int rules, int elements,
                         List<String> rejectedServices, long renderNanos) {
}
