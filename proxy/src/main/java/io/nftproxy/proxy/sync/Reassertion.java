package io.nftproxy.proxy.sync;

import java.util.List;
import java.util.TreeSet;

import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftKernel;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.Transaction;

/**
 * A re-assertion's repair, after its sync: every element we hold sent again, {@value #SLICE} a
 * transaction ({@link ResendSlices}), and every chain's rules compared with the kernel's. The
 * kernel refusing a transaction (someone changed an element) or a chain that differs fails it;
 * the caller then forgets what we hold, so that the retry rebuilds our tables whole.
 */
final class Reassertion {
    /**
     * Elements in one transaction of the repair: another nftables user waits about 10 ms for one
     * (measured at 10,000 services), and the repair of 30,000 services takes a few hundred.
     */
    static final int SLICE = 2048;

    private Reassertion() {
    }

    /** Sends what {@code committed} holds again under generation {@code g}'s names; what the commits took. */
    static CommitStats repair(Committed committed, Generation g, Syncer.Committer resend, NftKernel kernel)
            throws NftException {
        CommitStats sum = CommitStats.EMPTY;
        for (TableState ts : committed.tables().values()) {
            for (Transaction tx : ResendSlices.of(ts, SLICE)) {
                sum = sum.plus(resend.commit(g.apply(tx)));
            }
            for (String chain : new TreeSet<>(ts.chains.keySet())) {
                List<Rule> inKernel = kernel.listRules(ts.table.family(), ts.table.name(), g.chain(chain));
                List<Rule> ours = ts.chains.get(chain).rules().stream().map(g::rule).toList();
                if (!ResendSlices.sameRules(ours, inKernel)) {
                    throw new NftException("re-asserting our tables", new IllegalStateException("chain " + chain
                            + " of table " + ts.table.family().keyword() + " " + ts.table.name() + " differs from what we committed"));
                }
            }
        }
        return sum;
    }
}
