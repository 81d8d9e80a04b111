package io.nftproxy.proxy.sync;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.PackedElements;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.expr.Counter;
import io.nftproxy.netlink.nft.expr.Expr;

/**
 * A re-assertion's repair: what we hold in one table, sent again as a series of small
 * transactions instead of one that flushes and refills every map. The kernel runs each batch under
 * nf_tables' one mutex for every network namespace, so one large batch makes every other nftables
 * user on the node wait for all of it (measured at 30,000 services × 10: 16.9 s; see
 * docs/benchmarks.md, {@code bench --neighbour}).
 *
 * <p>The table, its sets and chains are declared again and every element re-added, at most
 * {@code max} a transaction: an object or element added again with the same definition and data
 * is accepted and left as it is (its counter too), so between two transactions the table is what
 * we committed, and each brings back what it covers if it went missing. An element someone
 * changed makes its transaction fail (EEXIST), and the syncer rebuilds the table whole.
 *
 * <p>Rules are not re-sent but compared with the kernel's ({@link #sameRules}): a transaction
 * that adds a rule makes the kernel validate the whole table at commit (every chain reachable
 * from every verdict map element), which at 10,000 services held the mutex for 4 s, once per
 * transaction. Reading a chain's rules takes no lock. A difference is repaired by a rebuild.
 * Foreign additions to our sets are the drift watcher's to see. A pure function of what we hold.
 */
final class ResendSlices {
    private ResendSlices() {
    }

    /**
     * The transactions, in order: the table, its sets and chains declared; then the elements, at
     * most {@code max} a transaction (an interval set's never split).
     */
    static List<Transaction> of(TableState ts, int max) {
        List<Transaction> out = new ArrayList<>();
        Transaction decl = new Transaction().add(ts.table);
        new TreeMap<>(ts.sets).values().forEach(decl::add);
        new TreeMap<>(ts.chains).values().forEach(c -> decl.add(c.chain()));
        out.add(decl);

        TransactionPacker elements = new TransactionPacker(max);
        for (String name : new TreeMap<>(ts.elements).keySet()) {
            NftSet set = ts.sets.get(name);
            if (set == null || ts.unmanagedSets.contains(name)) {
                continue;
            }
            List<List<SetElement>> chunks = new ArrayList<>();
            if (set.has(NfTablesUapi.NFT_SET_INTERVAL)) {
                // Whole and in address order, as the kernel checks each interval element against
                // those already there (an end re-sent before its start looks like an overlap).
                List<SetElement> all = new ArrayList<>();
                ts.elements.get(name).forEachPacked((bytes, offset) -> all.add(PackedElements.decode(bytes, offset)));
                all.sort(SetElement.INTERVAL_ORDER);
                chunks.add(all);
            } else {
                List<PackedElements.Builder> packed = new ArrayList<>();
                ts.elements.get(name).forEachPacked((bytes, offset) -> {
                    if (packed.isEmpty() || packed.get(packed.size() - 1).size() >= max) {
                        packed.add(PackedElements.builder());
                    }
                    packed.get(packed.size() - 1).addPacked(bytes, offset, PackedElements.packedLength(bytes, offset));
                });
                packed.forEach(b -> chunks.add(b.build()));
            }
            for (List<SetElement> chunk : chunks) {
                elements.add(chunk.size(), t -> t.add(new Elements(set.family(), set.table(), name, chunk)));
            }
        }
        out.addAll(elements.done());
        return out;
    }

    /** Whether the kernel's rules of a chain do what ours do (counters' counts and handles aside). */
    static boolean sameRules(List<Rule> ours, List<Rule> kernel) {
        if (ours.size() != kernel.size()) {
            return false;
        }
        for (int i = 0; i < ours.size(); i++) {
            if (!comparable(ours.get(i)).equals(comparable(kernel.get(i)))) {
                return false;
            }
        }
        return true;
    }

    private static List<Object> comparable(Rule r) {
        List<Object> out = new ArrayList<>();
        for (Expr e : r.exprs()) {
            out.add(e instanceof Counter ? Counter.zero() : e);
        }
        out.add(r.comment());
        return out;
    }
}
