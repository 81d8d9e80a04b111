package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.nft.print.NftPrinter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An ordered list of operations that the kernel applies as one nfnetlink batch: all of them, or
 * none. Prints itself as the nft script that would do the same.
 */
public final class Transaction {
    private final List<Op> ops = new ArrayList<>();

    public Transaction add(NftObject o) {
        return op(Op.Verb.ADD, o);
    }

    public Transaction create(NftObject o) {
        return op(Op.Verb.CREATE, o);
    }

    public Transaction insert(Rule r) {
        return op(Op.Verb.INSERT, r);
    }

    public Transaction replace(Rule r) {
        return op(Op.Verb.REPLACE, r);
    }

    public Transaction flush(NftObject o) {
        return op(Op.Verb.FLUSH, o);
    }

    public Transaction delete(NftObject o) {
        return op(Op.Verb.DELETE, o);
    }

    public Transaction destroy(NftObject o) {
        return op(Op.Verb.DESTROY, o);
    }

    public Transaction op(Op.Verb verb, NftObject o) {
        ops.add(new Op(verb, o));
        return this;
    }

    public Transaction addAll(Transaction other) {
        ops.addAll(other.ops);
        return this;
    }

    public List<Op> ops() {
        return Collections.unmodifiableList(ops);
    }

    public int size() {
        return ops.size();
    }

    public boolean isEmpty() {
        return ops.isEmpty();
    }

    /** The nft script equivalent to this transaction, one command a line. */
    @Override
    public String toString() {
        return toString((family, table, name) -> null);
    }

    /** Where a set declared before a transaction is found, to print its elements by its types. */
    @FunctionalInterface
    public interface KnownSets {
        /** The set, or null when it is not known. */
        NftSet find(Family family, String table, String name);
    }

    /**
     * The same, element keys and data printed by their set's types as nft prints them (addresses,
     * protocols, ports): the set's declaration in this transaction, else {@code known}'s; raw
     * bytes for a set neither knows.
     */
    public String toString(KnownSets known) {
        // Sets are found by family and table too: ip and ip6 tables hold sets of the same name.
        Map<String, NftSet> sets = new HashMap<>();
        for (Op op : ops) {
            if (op.object() instanceof NftSet s) {
                sets.put(setKey(s, s.name()), s);
            }
        }
        StringBuilder sb = new StringBuilder();
        for (Op op : ops) {
            NftObject o = op.object();
            sb.append(NftPrinter.operation(op, name -> {
                NftSet s = sets.get(setKey(o, name));
                return s != null ? s : known.find(o.family(), o.table(), name);
            })).append('\n');
        }
        return sb.toString();
    }

    private static String setKey(NftObject where, String name) {
        return where.family().keyword() + ' ' + where.table() + ' ' + name;
    }
}
