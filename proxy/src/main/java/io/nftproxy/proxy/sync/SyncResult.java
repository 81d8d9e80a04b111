package io.nftproxy.proxy.sync;

import java.util.List;

import io.nftproxy.netlink.nft.CommitStats;

/**
 * The outcome of one sync: whether it was full, the commit's cost, how many chains it changed,
 * what we now own, the service ports left out because the kernel refused their objects, and
 * whether every element was created anew (their kernel counters start from zero).
 */
public record SyncResult(boolean full, CommitStats commit, int changedChains, int chains, int rules, int elements,
                         List<String> rejectedServices, long renderNanos, boolean elementsRecreated) {
    /** A sync whose elements were all created anew exactly when it was full. */
    public SyncResult(boolean full, CommitStats commit, int changedChains, int chains, int rules, int elements,
                      List<String> rejectedServices, long renderNanos) {
        this(full, commit, changedChains, chains, rules, elements, rejectedServices, renderNanos, full);
    }
}
