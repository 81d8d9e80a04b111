package io.nftproxy.proxy.sync;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftKernel;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.render.DesiredChain;

/**
 * A full sync over our tables of a previous run (a restart, an upgrade) or of ours forgotten (a
 * rebuild): the new ruleset written beside the generation in use, switched to in one small
 * transaction, the old one deleted after ({@link Takeover}); until the switch traffic meets the
 * old ruleset, whole. A failure to delete the old generation leaves it unreachable, and the next
 * takeover deletes it.
 */
final class WrittenBeside {
    private static final Logger LOG = LoggerFactory.getLogger(Syncer.class);

    /** What a takeover did. */
    record Taken(SyncResult result) {
    }

    /** Our table written whole under generation {@code g}'s names, beside the one in use ({@link BatchedReplace}). */
    @FunctionalInterface
    interface Writer {
        SyncResult write(Generation g) throws NftException;
    }

    private final NftKernel kernel;
    private final String tableName;
    private final Syncer.Committer committer;
    private final Committed committed;
    /** Elements in one transaction emptying a generation's large sets before they go. */
    private final int batch;

    WrittenBeside(NftKernel kernel, String tableName, Syncer.Committer committer, Committed committed, int batch) {
        this.kernel = kernel;
        this.tableName = tableName;
        this.committer = committer;
        this.committed = committed;
        this.batch = batch;
    }

    /**
     * Takes our tables over, or null when it cannot be done so (base chains that reach both
     * generations, a base chain whose hook or priority changed, a transaction refused for no
     * service): the caller replaces our tables in one transaction, as before generations existed.
     * When writing beside failed, what we hold is cleared ({@code clear}) first. {@code switched}
     * is told the generation in use as soon as the switch is committed, before the old one is
     * deleted: what reads the kernel meanwhile (the counters' scrape) reads the new one.
     */
    Taken takeOver(Writer writer, Runnable clear, Consumer<Generation> switched) throws NftException {
        Map<IpFamily, Takeover.Listing> ours;
        Generation old;
        try {
            ours = Takeover.list(kernel, tableName);
            old = Takeover.inUse(kernel, ours);
        } catch (NftException e) {
            LOG.warn("could not read which chains and sets table {} holds ({}); replacing it in one transaction",
                    tableName, e.getMessage());
            return null;
        }
        if (old == null) {
            LOG.warn("the base chains of table {} reach two generations of our chains and sets; replacing the table in"
                    + " one transaction", tableName);
            return null;
        }
        Generation next = old.other();
        SyncResult written;
        CommitStats switchedTo;
        CommitStats leftovers = CommitStats.EMPTY;
        try {
            // What a takeover that stopped half-way left in the next generation: nothing reaches it.
            // Its keys are read without a lock (we hold none of it) to empty its sets in small steps.
            for (Transaction tx : Takeover.drop(next, ours, (f, set) -> kernelKeys(f, next.set(set)), (f, c) -> null, batch)) {
                leftovers = leftovers.plus(committer.commit(tx));
            }
            written = writer.write(next);
            switchedTo = committer.commit(Takeover.switchTo(next, committed.tables(), ours));
            ours.keySet().retainAll(committed.tables().keySet()); // the switch deleted the tables of families not in use
        } catch (NftException e) {
            LOG.warn("could not write table {} beside the ruleset in use ({}); replacing it in one transaction",
                    tableName, e.getMessage());
            clear.run();
            return null;
        }
        switched.accept(next);
        CommitStats dropped = CommitStats.EMPTY;
        try {
            for (Transaction tx : Takeover.drop(old, ours, this::largeHeldKeys, this::heldRules, batch)) {
                dropped = dropped.plus(committer.commit(tx));
            }
        } catch (NftException e) {
            LOG.warn("deleting the previous ruleset of table {}: {}; it is unreachable, and the next takeover deletes it",
                    tableName, e.getMessage());
        }
        return new Taken(new SyncResult(true, leftovers.plus(written.commit()).plus(switchedTo).plus(dropped),
                written.changedChains(), written.chains(), written.rules(), written.elements(), written.rejectedServices(),
                written.renderNanos()));
    }

    /** The keys of one set of our tables in the kernel, named in the kernel's terms (a takeover's leftovers). */
    private List<Bytes> kernelKeys(IpFamily f, String kernelSet) {
        try {
            return kernel.listElements(f.nft(), tableName, kernelSet).stream()
                    .filter(e -> !e.isIntervalEnd()).map(SetElement::key).toList();
        } catch (NftException e) {
            return null; // deleted with the set
        }
    }

    /** The keys we hold in a set large enough that deleting it whole would hold the kernel's lock for long; else null. */
    private List<Bytes> largeHeldKeys(IpFamily f, String set) {
        return committed.read(f, set, ElementTable::size, 0) < batch ? null : committed.read(f, set, ElementTable::keys, List.of());
    }

    /** How many rules we hold in one chain (null: none). */
    private Integer heldRules(IpFamily f, String chain) {
        TableState ts = committed.get(f);
        DesiredChain c = ts == null ? null : ts.chains.get(chain);
        return c == null ? null : c.rules().size();
    }
}
