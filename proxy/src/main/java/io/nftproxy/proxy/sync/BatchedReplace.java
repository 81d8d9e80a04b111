package io.nftproxy.proxy.sync;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.TransactionException;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.Fragment;

/**
 * A table written whole in transactions that each leave the kernel consistent: the tables and
 * globals, then whole services ({@link FirstSyncBatches}), each transaction sized by what the
 * kernel took for the ones before ({@link KernelPace}). A first sync onto a node without our
 * tables writes so; a takeover writes the same beside the generation in use ({@code beside}:
 * tables kept, base chains' rules held back for the switch, {@link Takeover}), where nothing
 * reaches what is written. A service whose objects the kernel refuses is left out, as in one
 * transaction, up to {@code maxExclusions} times a batch. When a transaction fails other than by a
 * refused service, the services before it stay in the kernel, and the caller clears what we hold:
 * the retry replaces our tables whole.
 */
final class BatchedReplace {
    /** What the batches wrote: their commits, the chains they changed, the time spent preparing them. */
    record Written(CommitStats commits, int changedChains, long prepareNanos) {
        Written plus(Written o) {
            return new Written(commits.plus(o.commits), changedChains + o.changedChains, prepareNanos + o.prepareNanos);
        }
    }

    private final Committed committed;
    private final Refusals refusals;
    private final String tableName;
    private final Syncer.Committer committer;
    private final int firstBatch;
    private final int maxExclusions;

    /**
     * @param firstBatch    objects in a transaction before the kernel's pace is known (Syncer#FIRST_SYNC_BATCH)
     * @param maxExclusions how many service ports one batch may leave out before its failure is the sync's
     */
    BatchedReplace(Committed committed, Refusals refusals, String tableName, Syncer.Committer committer,
                   int firstBatch, int maxExclusions) {
        this.committed = committed;
        this.refusals = refusals;
        this.tableName = tableName;
        this.committer = committer;
        this.firstBatch = firstBatch;
        this.maxExclusions = maxExclusions;
    }

    /**
     * Writes {@code r}'s fragments under generation {@code g}'s names, recording in what we hold
     * what each batch the kernel took; ports the kernel refuses are named in {@code rejected}.
     */
    Written write(SyncPlan plan, Rendered r, ProxyState state, Generation g, boolean beside, List<String> rejected)
            throws NftException {
        Written sum = new Written(CommitStats.EMPTY, 0, 0);
        FirstSyncBatches.Queue batches = FirstSyncBatches.queue(r.changes());
        // Each transaction sized by what the kernel took for the last ones (KernelPace).
        KernelPace pace = new KernelPace(firstBatch);
        while (batches.hasNext()) {
            sum = sum.plus(writeBatch(batches.next(pace.limit()), pace, plan, r, state, g, beside, rejected));
        }
        return sum;
    }

    /**
     * One batch, its ports the kernel refuses left out one by one; recorded in what we hold once
     * the kernel took it. The first batch is the fresh tables and their globals, cut again by
     * the kernel's pace.
     */
    private Written writeBatch(FirstSyncBatches.Batch next, KernelPace pace, SyncPlan plan, Rendered r,
                               ProxyState state, Generation g, boolean beside, List<String> rejected) throws NftException {
        boolean globalsBatch = next.isGlobals();
        List<Contributor> batch = new ArrayList<>(next.ports());
        long prepareNanos = 0;
        for (int attempt = 0; ; attempt++) {
            long t0 = System.nanoTime();
            Transaction tx = new Transaction();
            List<Delta> deltas = batchTransaction(plan, r, batch, globalsBatch, beside, tx);
            prepareNanos += System.nanoTime() - t0;
            CommitStats sum = CommitStats.EMPTY;
            try {
                if (globalsBatch) {
                    for (Transaction part : FirstSyncBatches.globals(tx, pace.limit(), !beside)) {
                        CommitStats st = committer.commit(g.apply(part));
                        pace.observe(FirstSyncBatches.weight(part), st.kernelNanos());
                        sum = sum.plus(st);
                    }
                } else {
                    sum = committer.commit(g.apply(tx));
                    pace.observe(next.weight(), sum.kernelNanos());
                }
            } catch (TransactionException e) {
                ServicePortName culprit = Refusals.ownerOf(e, r.chainOwners(), committed);
                if (attempt >= maxExclusions || culprit == null) {
                    throw e;
                }
                refusals.kernelRefused(culprit, state, e.getMessage(), rejected);
                batch.remove(Contributor.of(culprit));
                try (Committed.Writing w = committed.writing()) {
                    deltas.forEach(Delta::discard);
                }
                continue;
            }
            int changedChains = 0;
            try (Committed.Writing w = committed.writing()) {
                for (Delta d : deltas) {
                    d.apply();
                    changedChains += d.changedChains();
                }
                if (globalsBatch) {
                    committed.replace(r.fresh(), Set.of());
                }
            }
            return new Written(sum, changedChains, prepareNanos);
        }
    }

    /**
     * One batch of a table written whole, into {@code tx}: in each family the plan uses, the
     * batch's fragments as a delta from what we hold, and for the globals' batch the fresh table
     * itself first (created over ours, or beside it under the next generation's names); a family
     * the plan no longer uses loses its table in the globals' batch (beside: the switch deletes
     * it, Takeover#switchTo). The ports' deltas are counted into what we hold as they are
     * computed, and discarded if the kernel refuses them; the globals' are applied once taken.
     */
    private List<Delta> batchTransaction(SyncPlan plan, Rendered r, List<Contributor> batch, boolean globalsBatch,
                                         boolean beside, Transaction tx) {
        List<Delta> deltas = new ArrayList<>();
        for (IpFamily f : IpFamily.values()) {
            if (!plan.families().contains(f)) {
                if (globalsBatch && !beside) {
                    Table t = new Table(f.nft(), tableName);
                    tx.add(t).delete(t); // no table in a family the node does not use
                }
                continue;
            }
            TableState ts = globalsBatch ? r.fresh().get(f) : committed.get(f);
            if (globalsBatch && !beside) {
                tx.add(ts.table).delete(ts.table).add(ts.table); // as in one transaction
            } else if (globalsBatch) {
                tx.add(ts.table); // a family without a table of ours gets one
            }
            Map<Contributor, Fragment> changes = r.changes().get(f);
            Map<Contributor, Fragment> part = new LinkedHashMap<>();
            for (Contributor who : batch) {
                if (changes.containsKey(who)) {
                    part.put(who, changes.get(who));
                }
            }
            Delta d;
            if (globalsBatch) {
                d = new Delta(ts, part);
            } else {
                try (Committed.Writing w = committed.writing()) {
                    d = Delta.counting(ts, part);
                }
            }
            d.write(tx);
            deltas.add(d);
        }
        return deltas;
    }

}
