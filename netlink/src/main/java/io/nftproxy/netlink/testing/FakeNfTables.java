package io.nftproxy.netlink.testing;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.nftproxy.ffi.Errno;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.CountedElement;
import io.nftproxy.netlink.nft.CounterReader;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftKernel;
import io.nftproxy.netlink.nft.NftObject;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.TransactionException;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Dynset;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.netlink.nft.expr.Lookup;

/**
 * nf_tables in memory, for tests that cannot (or need not) reach the kernel. It applies the
 * operations the kernel applies and refuses what the kernel refuses, with the kernel's errno:
 * creating what exists (EEXIST), deleting or referring to what does not (ENOENT: a jump or goto
 * to a missing chain, a lookup of a missing set, a verdict element naming a missing chain),
 * deleting a chain or set still referred to (EBUSY), an element whose key or data does not fit
 * its set (EINVAL), an element re-added with other data or a set redefined (EEXIST), a base
 * chain's hook changed (EOPNOTSUPP). A transaction applies whole or not at all. Where the
 * kernel's behaviour was uncertain it was measured, and {@code FakeNfTablesKernelTest} runs the
 * same transactions against both to keep it so. Not modelled: loop detection, expressions'
 * register and type checks, set timeouts.
 */
public final class FakeNfTables implements NftKernel, CounterReader {
    private Map<String, FakeTable> tables = new LinkedHashMap<>();
    private long generation;
    private NftException failNext;

    /** One table's objects, in the order the kernel lists them (creation order). */
    private static final class FakeTable {
        Table table;
        long nextHandle = 1;
        final LinkedHashMap<String, Chain> chains = new LinkedHashMap<>();
        final LinkedHashMap<String, List<Rule>> rules = new LinkedHashMap<>();
        final LinkedHashMap<String, NftSet> sets = new LinkedHashMap<>();
        final LinkedHashMap<String, LinkedHashMap<ElementKey, SetElement>> elements = new LinkedHashMap<>();
        /** Per set with a counter: element key to {packets, bytes}; an element created again starts at zero. */
        final Map<String, Map<Bytes, long[]>> counts = new HashMap<>();

        FakeTable(Table t) {
            table = t;
        }

        FakeTable copy() {
            FakeTable c = new FakeTable(table);
            c.nextHandle = nextHandle;
            c.chains.putAll(chains);
            rules.forEach((k, v) -> c.rules.put(k, new ArrayList<>(v)));
            c.sets.putAll(sets);
            elements.forEach((k, v) -> c.elements.put(k, new LinkedHashMap<>(v)));
            counts.forEach((set, m) -> {
                Map<Bytes, long[]> copy = new HashMap<>();
                m.forEach((k, v) -> copy.put(k, v.clone()));
                c.counts.put(set, copy);
            });
            return c;
        }

        /**
         * Per chain, the rules and verdict elements that jump or go to it; counted when asked and
         * kept while only chains are deleted (a generation's chains deleted one after the other
         * would count every rule once per chain), forgotten by any other operation.
         */
        Map<String, Integer> chainUses;

        /** Rules and verdict elements that jump or go to {@code chain}. */
        int chainUse(String chain) {
            if (chainUses == null) {
                Map<String, Integer> n = new HashMap<>();
                for (List<Rule> rs : rules.values()) {
                    for (Rule r : rs) {
                        for (Expr e : r.exprs()) {
                            if (e instanceof Immediate i && i.data() instanceof Verdict v && v.chain() != null) {
                                n.merge(v.chain(), 1, Integer::sum);
                            }
                        }
                    }
                }
                for (LinkedHashMap<ElementKey, SetElement> els : elements.values()) {
                    for (SetElement el : els.values()) {
                        if (el.data() instanceof Verdict v && v.chain() != null) {
                            n.merge(v.chain(), 1, Integer::sum);
                        }
                    }
                }
                chainUses = n;
            }
            return chainUses.getOrDefault(chain, 0);
        }

        /** Per set, the rules that look it up or update it; kept as {@link #chainUses} is. */
        Map<String, Integer> setUses;

        /** Rules that look up or update {@code set}. */
        int setUse(String set) {
            if (setUses == null) {
                Map<String, Integer> n = new HashMap<>();
                for (List<Rule> rs : rules.values()) {
                    for (Rule r : rs) {
                        for (Expr e : r.exprs()) {
                            if (e instanceof Lookup l) {
                                n.merge(l.set(), 1, Integer::sum);
                            } else if (e instanceof Dynset d) {
                                n.merge(d.set(), 1, Integer::sum);
                            }
                        }
                    }
                }
                setUses = n;
            }
            return setUses.getOrDefault(set, 0);
        }

        /** Forgets the counted uses: rules or elements changed. */
        void changed() {
            chainUses = null;
            setUses = null;
        }
    }

    /** Interval sets hold a start and an end element that may share key bytes. */
    private record ElementKey(Bytes key, boolean intervalEnd) {
        static ElementKey of(SetElement e) {
            return new ElementKey(e.key(), e.isIntervalEnd());
        }
    }

    /** Thrown inside a transaction; becomes the transaction's failure. */
    private static final class Refusal extends Exception {
        final int errno;

        Refusal(int errno, String message) {
            super(message, null, false, false);
            this.errno = errno;
        }
    }

    /** The next commit fails with {@code e} and changes nothing (a sync failing midway, say). */
    public synchronized void failNextCommit(NftException e) {
        failNext = e;
    }

    @Override
    public synchronized CommitStats commit(Transaction tx) throws NftException {
        if (failNext != null) {
            NftException e = failNext;
            failNext = null;
            throw e;
        }
        Map<String, FakeTable> work = new LinkedHashMap<>();
        tables.forEach((k, v) -> work.put(k, v.copy()));
        List<Op> ops = tx.ops();
        for (int i = 0; i < ops.size(); i++) {
            try {
                apply(work, ops.get(i));
            } catch (Refusal r) {
                throw new TransactionException(List.of(new TransactionException.Failure(i, ops.get(i), r.errno, r.getMessage())),
                        ops.size());
            }
        }
        tables = work;
        if (!ops.isEmpty()) {
            generation++;
        }
        return new CommitStats(ops.size(), ops.size(), 0, 0, 0);
    }

    private static String key(Family f, String table) {
        return f.keyword() + " " + table;
    }

    private static FakeTable table(Map<String, FakeTable> work, NftObject o) throws Refusal {
        FakeTable t = work.get(key(o.family(), o.table()));
        if (t == null) {
            throw new Refusal(Errno.ENOENT, "no table " + o.table());
        }
        return t;
    }

    private void apply(Map<String, FakeTable> work, Op op) throws Refusal {
        NftObject o = op.object();
        Op.Verb verb = op.verb();
        boolean destroy = verb == Op.Verb.DESTROY;
        if (o instanceof Table t) {
            String k = key(t.family(), t.name());
            FakeTable existing = work.get(k);
            switch (verb) {
                case ADD -> work.computeIfAbsent(k, x -> new FakeTable(t));
                case CREATE -> {
                    if (existing != null) {
                        throw new Refusal(Errno.EEXIST, "table exists");
                    }
                    work.put(k, new FakeTable(t));
                }
                case FLUSH -> {
                    if (existing == null) {
                        throw new Refusal(Errno.ENOENT, "no table");
                    }
                    existing.rules.replaceAll((c, rs) -> new ArrayList<>());
                }
                case DELETE, DESTROY -> {
                    if (existing == null && !destroy) {
                        throw new Refusal(Errno.ENOENT, "no table");
                    }
                    work.remove(k);
                }
                default -> throw new Refusal(Errno.EOPNOTSUPP, verb + " of a table");
            }
            return;
        }
        FakeTable t;
        try {
            t = table(work, o);
        } catch (Refusal r) {
            if (destroy) {
                return;
            }
            throw r;
        }
        if (!((o instanceof Chain || o instanceof NftSet) && (verb == Op.Verb.DELETE || destroy))) {
            t.changed(); // deletions of sets and chains keep the counts themselves
        }
        if (o instanceof Chain c) {
            chain(t, verb, c);
        } else if (o instanceof Rule r) {
            rule(t, verb, r);
        } else if (o instanceof NftSet s) {
            set(t, verb, s);
        } else if (o instanceof Elements e) {
            elements(t, verb, e);
        }
    }

    private static void chain(FakeTable t, Op.Verb verb, Chain c) throws Refusal {
        Chain existing = t.chains.get(c.name());
        switch (verb) {
            case ADD, CREATE -> {
                if (existing == null) {
                    t.chains.put(c.name(), c);
                    t.rules.put(c.name(), new ArrayList<>());
                    t.nextHandle++;
                } else if (verb == Op.Verb.CREATE) {
                    throw new Refusal(Errno.EEXIST, "chain exists");
                } else if (c.base() != null && !Objects.equals(c.base(), existing.base())) {
                    // Measured: a base chain's hook or priority cannot change; a plain re-add is a no-op.
                    throw new Refusal(Errno.EOPNOTSUPP, "chain's hook cannot change");
                }
            }
            case FLUSH -> {
                if (existing == null) {
                    throw new Refusal(Errno.ENOENT, "no chain " + c.name());
                }
                t.rules.put(c.name(), new ArrayList<>());
            }
            case DELETE, DESTROY -> {
                if (existing == null) {
                    if (verb == Op.Verb.DELETE) {
                        throw new Refusal(Errno.ENOENT, "no chain " + c.name());
                    }
                    return;
                }
                // Measured: deleting a chain deletes its rules; only references from elsewhere block it.
                List<Rule> own = t.rules.remove(c.name());
                t.chains.remove(c.name());
                if (own != null && !own.isEmpty()) {
                    t.changed(); // its own rules' jumps and lookups no longer count
                }
                if (t.chainUse(c.name()) > 0) {
                    t.chains.put(c.name(), existing);
                    t.rules.put(c.name(), own);
                    t.changed();
                    throw new Refusal(Errno.EBUSY, "chain " + c.name() + " is in use");
                }
            }
            default -> throw new Refusal(Errno.EOPNOTSUPP, verb + " of a chain");
        }
    }

    private static void rule(FakeTable t, Op.Verb verb, Rule r) throws Refusal {
        List<Rule> rules = t.rules.get(r.chain());
        if (rules == null) {
            if (verb == Op.Verb.DESTROY) {
                return;
            }
            throw new Refusal(Errno.ENOENT, "no chain " + r.chain());
        }
        int at = -1;
        for (int i = 0; i < rules.size(); i++) {
            if (rules.get(i).handle() == r.handle()) {
                at = i;
            }
        }
        switch (verb) {
            case ADD, CREATE, INSERT, REPLACE -> {
                for (Expr e : r.exprs()) {
                    if (e instanceof Immediate i && i.data() instanceof Verdict v && v.chain() != null && !t.chains.containsKey(v.chain())) {
                        throw new Refusal(Errno.ENOENT, "no chain " + v.chain());
                    }
                    if (e instanceof Lookup l && !t.sets.containsKey(l.set()) || e instanceof Dynset d && !t.sets.containsKey(d.set())) {
                        throw new Refusal(Errno.ENOENT, "no set");
                    }
                }
                if (verb == Op.Verb.REPLACE) {
                    if (at < 0) {
                        throw new Refusal(Errno.ENOENT, "no rule with handle " + r.handle());
                    }
                    rules.set(at, r);
                } else {
                    Rule placed = r.withHandle(t.nextHandle++);
                    if (verb == Op.Verb.INSERT) {
                        rules.add(0, placed);
                    } else {
                        rules.add(placed);
                    }
                }
            }
            case DELETE, DESTROY -> {
                if (at < 0) {
                    if (verb == Op.Verb.DELETE) {
                        throw new Refusal(Errno.ENOENT, "no rule with handle " + r.handle());
                    }
                    return;
                }
                rules.remove(at);
            }
            default -> throw new Refusal(Errno.EOPNOTSUPP, verb + " of a rule");
        }
    }

    private static void set(FakeTable t, Op.Verb verb, NftSet s) throws Refusal {
        NftSet existing = t.sets.get(s.name());
        switch (verb) {
            case ADD, CREATE -> {
                if (existing == null) {
                    t.sets.put(s.name(), s);
                    t.elements.put(s.name(), new LinkedHashMap<>());
                    t.nextHandle++;
                } else if (verb == Op.Verb.CREATE || !sameDefinition(existing, s)) {
                    // Measured: a set re-added with another type is EEXIST, not a redefinition.
                    throw new Refusal(Errno.EEXIST, "set " + s.name() + " exists");
                }
            }
            case FLUSH -> {
                if (existing == null) {
                    throw new Refusal(Errno.ENOENT, "no set " + s.name());
                }
                t.elements.get(s.name()).clear();
                t.counts.remove(s.name());
            }
            case DELETE, DESTROY -> {
                if (existing == null) {
                    if (verb == Op.Verb.DELETE) {
                        throw new Refusal(Errno.ENOENT, "no set " + s.name());
                    }
                    return;
                }
                if (t.setUse(s.name()) > 0) {
                    throw new Refusal(Errno.EBUSY, "set " + s.name() + " is in use");
                }
                t.sets.remove(s.name());
                if (s.isVerdictMap() || existing.isVerdictMap()) {
                    t.chainUses = null; // its elements' jumps no longer count
                }
                t.elements.remove(s.name());
                t.counts.remove(s.name());
            }
            default -> throw new Refusal(Errno.EOPNOTSUPP, verb + " of a set");
        }
    }

    private static boolean sameDefinition(NftSet a, NftSet b) {
        return a.key().equals(b.key()) && Objects.equals(a.data(), b.data()) && a.flags() == b.flags();
    }

    private static void elements(FakeTable t, Op.Verb verb, Elements e) throws Refusal {
        NftSet s = t.sets.get(e.set());
        if (s == null) {
            if (verb == Op.Verb.DESTROY) {
                return;
            }
            throw new Refusal(Errno.ENOENT, "no set " + e.set());
        }
        LinkedHashMap<ElementKey, SetElement> els = t.elements.get(e.set());
        for (SetElement el : e.elements()) {
            ElementKey k = ElementKey.of(el);
            SetElement existing = els.get(k);
            switch (verb) {
                case ADD, CREATE -> {
                    if (el.key().length() != s.keyLength()) {
                        throw new Refusal(Errno.EINVAL, "key of " + el.key().length() + " bytes for a key of " + s.keyLength());
                    }
                    boolean end = k.intervalEnd();
                    if (s.isMap() && !end) {
                        if (el.data() == null) {
                            throw new Refusal(Errno.EINVAL, "a map element needs data");
                        }
                        if (s.isVerdictMap() != (el.data() instanceof Verdict)) {
                            throw new Refusal(Errno.EINVAL, "data of the wrong kind");
                        }
                        if (el.data() instanceof Verdict v && v.chain() != null && !t.chains.containsKey(v.chain())) {
                            throw new Refusal(Errno.ENOENT, "no chain " + v.chain());
                        }
                        if (el.data() instanceof Data.Value val && val.bytes().length() != DataType.keyLength(s.data().fields())) {
                            throw new Refusal(Errno.EINVAL, "data of " + val.bytes().length() + " bytes");
                        }
                    }
                    boolean ranges = s.rangeConcat();
                    if (ranges) {
                        checkConcatRange(s, els.values(), el);
                    }
                    if (existing != null) {
                        // Measured: the same element again is fine, with other data it is EEXIST.
                        if (verb == Op.Verb.CREATE || !Objects.equals(existing.data(), el.data())) {
                            throw new Refusal(Errno.EEXIST, "element exists");
                        }
                        continue;
                    }
                    if (s.has(NfTablesUapi.NFT_SET_INTERVAL) && !ranges) {
                        checkInterval(els.values(), el);
                    }
                    els.put(k, new SetElement(el.key(), el.keyEnd(), el.data(), el.timeoutMs(), 0, el.flags(), el.comment()));
                }
                case DELETE, DESTROY -> {
                    if (existing == null) {
                        if (verb == Op.Verb.DELETE) {
                            throw new Refusal(Errno.ENOENT, "no such element");
                        }
                        continue;
                    }
                    els.remove(k);
                    Map<Bytes, long[]> c = t.counts.get(e.set());
                    if (c != null) {
                        c.remove(el.key());
                    }
                }
                default -> throw new Refusal(Errno.EOPNOTSUPP, verb + " of elements");
            }
        }
    }

    /**
     * An interval set of concatenations (the kernel's pipapo) holds elements "start-end" per
     * field; as nft_pipapo_insert, one whose start or end falls inside another element is
     * refused, unless it is that very element (ENOTEMPTY in the set, which nf_tables turns into
     * EEXIST, as for the rbtree below).
     */
    private static void checkConcatRange(NftSet s, Collection<SetElement> present, SetElement el) throws Refusal {
        Bytes end = el.keyEnd() == null ? el.key() : el.keyEnd();
        for (SetElement e : present) {
            Bytes eEnd = e.keyEnd() == null ? e.key() : e.keyEnd();
            if (e.key().equals(el.key()) && eEnd.equals(end)) {
                continue;
            }
            if (within(s, e.key(), eEnd, el.key()) || within(s, e.key(), eEnd, end)) {
                throw new Refusal(Errno.EEXIST, "range element overlaps " + e.key() + "-" + eEnd);
            }
        }
    }

    /** Whether every field of {@code point} lies between those of {@code lo} and {@code hi}. */
    private static boolean within(NftSet s, Bytes lo, Bytes hi, Bytes point) {
        int off = 0;
        for (DataType f : s.key()) {
            int to = off + ((f.length() + 3) & ~3);
            Bytes p = point.slice(off, to);
            if (p.compareTo(lo.slice(off, to)) < 0 || p.compareTo(hi.slice(off, to)) > 0) {
                return false;
            }
            off = to;
        }
        return true;
    }

    /**
     * The rbtree's overlap check, made as each element arrives (net/netfilter/nft_set_rbtree.c):
     * the nearest element at or below the new one (an end at the same key counts for a new start)
     * must not be of the same kind, and above a new end there must be no end. The kernel reports
     * ENOTEMPTY, which nf_tables turns into EEXIST. So intervals go in start first.
     */
    private static void checkInterval(Collection<SetElement> present, SetElement el) throws Refusal {
        SetElement below = null;
        SetElement above = null;
        for (SetElement e : present) {
            int d = SetElement.INTERVAL_ORDER.compare(e, el);
            if (d < 0 && (below == null || SetElement.INTERVAL_ORDER.compare(e, below) > 0)) {
                below = e;
            } else if (d > 0 && (above == null || SetElement.INTERVAL_ORDER.compare(e, above) < 0)) {
                above = e;
            }
        }
        if (below != null && below.isIntervalEnd() == el.isIntervalEnd()) {
            throw new Refusal(Errno.EEXIST, "interval element overlaps (the nearest below is also "
                    + (el.isIntervalEnd() ? "an end" : "a start") + ")");
        }
        if (el.isIntervalEnd() && above != null && above.isIntervalEnd()) {
            throw new Refusal(Errno.EEXIST, "interval end overlaps (the nearest above is an end)");
        }
    }

    @Override
    public synchronized List<SetElement> listElements(Family family, String table, String set) throws NftException {
        FakeTable t = tables.get(key(family, table));
        LinkedHashMap<ElementKey, SetElement> els = t == null ? null : t.elements.get(set);
        if (els == null) {
            throw new NftException("set " + family.keyword() + " " + table + " " + set, Errno.ENOENT, null);
        }
        return List.copyOf(els.values());
    }

    /** One chain's rules, as the kernel's rule dump filtered by chain: without building the whole table. */
    @Override
    public synchronized List<Rule> listRules(Family family, String table, String chain) throws NftException {
        FakeTable t = tables.get(key(family, table));
        List<Rule> rules = t == null ? null : t.rules.get(chain);
        if (rules == null) {
            throw new NftException((t == null ? "table " : "chain ") + family.keyword() + " " + table
                    + (t == null ? "" : " " + chain), Errno.ENOENT, null);
        }
        return List.copyOf(rules);
    }

    @Override
    public synchronized TableContents readTable(Family family, String table) throws NftException {
        FakeTable t = tables.get(key(family, table));
        if (t == null) {
            throw new NftException("table " + family.keyword() + " " + table, Errno.ENOENT, null);
        }
        List<Rule> rules = new ArrayList<>();
        t.rules.values().forEach(rules::addAll);
        Map<String, List<SetElement>> elements = new LinkedHashMap<>();
        t.elements.forEach((k, v) -> elements.put(k, List.copyOf(v.values())));
        return new TableContents(t.table, List.copyOf(t.chains.values()), List.copyOf(t.sets.values()), elements, rules);
    }

    /**
     * Counts {@code packets} packets of {@code bytes} bytes on an element of a set declared with
     * a counter, as the kernel does when a lookup matches it: what traffic would do, for tests.
     */
    public synchronized void count(Family family, String table, String set, Bytes key, long packets, long bytes) {
        FakeTable t = tables.get(key(family, table));
        NftSet s = t == null ? null : t.sets.get(set);
        if (s == null || !s.counter() || !t.elements.get(set).containsKey(new ElementKey(key, false))) {
            throw new IllegalArgumentException("no counted element " + key + " in set " + set);
        }
        long[] c = t.counts.computeIfAbsent(set, x -> new HashMap<>()).computeIfAbsent(key, x -> new long[2]);
        c[0] += packets;
        c[1] += bytes;
    }

    @Override
    public synchronized List<CountedElement> countedElements(Family family, String table, String set) throws NftException {
        FakeTable t = tables.get(key(family, table));
        if (t == null || !t.sets.containsKey(set)) {
            throw new NftException("listing elements of table " + table + " " + set, Errno.ENOENT, null);
        }
        Map<Bytes, long[]> counts = t.counts.getOrDefault(set, Map.of());
        List<CountedElement> out = new ArrayList<>();
        for (SetElement el : t.elements.get(set).values()) {
            long[] c = counts.getOrDefault(el.key(), new long[2]);
            out.add(new CountedElement(el.key(), el.data(), c[0], c[1]));
        }
        return out;
    }

    @Override
    public synchronized boolean hasTable(Family family, String table) {
        return tables.containsKey(key(family, table));
    }

    @Override
    public synchronized long generation() {
        return generation;
    }
}
