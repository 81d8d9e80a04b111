package io.nftproxy.proxy.sync;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import io.nftproxy.netlink.nft.Transaction;

/**
 * Operations packed, in order, into transactions of about {@code limit} objects: the one being
 * filled is closed before an operation that would take it past the limit, unless it is empty (an
 * operation heavier than the limit goes alone). What each operation weighs is the caller's: an
 * element 1, a globals' rule {@link FirstSyncBatches#RULE_WEIGHT}, a chain flushed its rules.
 * Why small transactions at all: nf_tables runs each under one mutex for every network namespace,
 * so every other nftables user of the node waits for the whole of ours (docs/benchmarks.md).
 */
final class TransactionPacker {
    private final int limit;
    private final List<Transaction> done = new ArrayList<>();
    private Transaction cur = new Transaction();
    private int weight;

    TransactionPacker(int limit) {
        this.limit = Math.max(1, limit);
    }

    /** Adds what {@code op} writes into the transaction being filled, which it weighs {@code w} more. */
    void add(int w, Consumer<Transaction> op) {
        if (!cur.isEmpty() && weight + w > limit) {
            done.add(cur);
            cur = new Transaction();
            weight = 0;
        }
        op.accept(cur);
        weight += w;
    }

    /** The transactions, the last one closed. */
    List<Transaction> done() {
        if (!cur.isEmpty()) {
            done.add(cur);
            cur = new Transaction();
            weight = 0;
        }
        return done;
    }
}
