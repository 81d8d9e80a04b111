package io.nftproxy.proxy.sync;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.IntPredicate;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.PackedElements;
import io.nftproxy.netlink.nft.PackedSegments;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.proxy.render.DesiredChain;
import io.nftproxy.proxy.render.Fragment;

/**
 * The change from the committed state of one table to a new one, computed from the fragments of
 * the contributors that changed only. It writes the operations in an order the kernel accepts
 * within one transaction (references go before what they reference is deleted; what is referenced
 * exists before references to it are added), and after the kernel accepted them it updates the
 * committed state. (A re-assertion's repair re-sends what we hold separately: {@link ResendSlices}.)
 */
final class Delta {
    private final TableState state;
    private final Map<Contributor, Fragment> replaced = new LinkedHashMap<>();

    private final Map<String, DesiredChain> chainsAdded = new LinkedHashMap<>();
    private final Map<String, DesiredChain> chainsChanged = new LinkedHashMap<>();
    private final Map<String, Chain> chainsRemoved = new LinkedHashMap<>();
    private final Map<String, NftSet> setsAdded = new LinkedHashMap<>();
    private final Map<String, NftSet> setsRemoved = new LinkedHashMap<>();
    private final Map<String, List<SetElement>> elementsRemoved = new LinkedHashMap<>();
    private final Map<String, List<SetElement>> elementsAdded = new LinkedHashMap<>();
    /** After a partial change: per set, the keys whose count changed, to their element and count (null: gone). */
    private final Map<String, Map<Bytes, Kept>> changedElements = new HashMap<>();
    /** After counting every element again: the new tables. */
    private final Map<String, ElementTable> allElements = new HashMap<>();
    private boolean countedAll;
    /** Contributors new to the table only (a first sync's later batches): per set, their element lists, counted at apply (or already). */
    private final Map<String, List<PackedElements>> addedLists = new LinkedHashMap<>();
    private final Map<String, Contributor> newOwners = new HashMap<>();
    /** Counted into the committed tables at once ({@link #counting}): apply has nothing to count, discard takes them out. */
    private final boolean countInPlace;
    private boolean countedInPlace;
    /** Committed tables this delta created by counting in place: gone again if it is discarded. */
    private final Set<String> tablesCreated = new HashSet<>();

    /**
     * @param changes contributor to its new fragment, or to null when the contributor is gone
     */
    Delta(TableState state, Map<Contributor, Fragment> changes) {
        this(state, changes, false);
    }

    private Delta(TableState state, Map<Contributor, Fragment> changes, boolean countInPlace) {
        this.state = state;
        this.replaced.putAll(changes);
        this.countInPlace = countInPlace;
        compute();
    }

    /**
     * A delta that, when its contributors are all new to the table (a first sync's later
     * batches), counts their elements into the committed tables while it is computed: one lookup
     * an element instead of three (is it held, is it earlier in the batch, count it at apply). At
     * 100,000 services those lookups were a fifth of a first sync's Java time. The caller must
     * hold what guards the committed state against readers, and {@link #apply} the delta after
     * the kernel took it or {@link #discard} it.
     */
    static Delta counting(TableState state, Map<Contributor, Fragment> changes) {
        return new Delta(state, changes, true);
    }

    private void compute() {
        // Chains and sets are owned by exactly one contributor: compare old and new fragment.
        for (Map.Entry<Contributor, Fragment> e : replaced.entrySet()) {
            Fragment old = state.fragments.getOrDefault(e.getKey(), Fragment.EMPTY);
            Fragment neu = e.getValue() == null ? Fragment.EMPTY : e.getValue();
            for (DesiredChain c : neu.chains().values()) {
                DesiredChain was = state.chains.get(c.chain().name());
                newOwners.put(c.chain().name(), e.getKey());
                if (was == null) {
                    chainsAdded.put(c.chain().name(), c);
                } else if (!was.equals(c)) {
                    chainsChanged.put(c.chain().name(), c);
                }
            }
            for (DesiredChain c : old.chains().values()) {
                if (!neu.chains().containsKey(c.chain().name())) {
                    chainsRemoved.put(c.chain().name(), c.chain());
                }
            }
            for (NftSet s : neu.sets().values()) {
                NftSet was = state.sets.get(s.name());
                if (was == null) {
                    setsAdded.put(s.name(), s);
                } else if (!was.equals(s)) {
                    // A redefined set is deleted and created again; its references are flushed first.
                    setsRemoved.put(s.name(), was);
                    setsAdded.put(s.name(), s);
                }
            }
            for (NftSet s : old.sets().values()) {
                if (!neu.sets().containsKey(s.name())) {
                    setsRemoved.put(s.name(), s);
                }
            }
        }
        // A chain that moved between contributors is neither added nor removed.
        chainsRemoved.keySet().removeAll(chainsAdded.keySet());
        chainsRemoved.keySet().removeAll(chainsChanged.keySet());
        for (String moved : new ArrayList<>(chainsAdded.keySet())) {
            if (state.chains.containsKey(moved)) {
                chainsChanged.put(moved, chainsAdded.remove(moved));
            }
        }
        for (String s : new ArrayList<>(setsRemoved.keySet())) {
            if (setsAdded.containsKey(s) && Objects.equals(setsAdded.get(s), state.sets.get(s))) {
                setsRemoved.remove(s);
                setsAdded.remove(s);
            }
        }
        // Nothing committed yet (a first sync, a rebuild): the elements are counted afresh into
        // new tables. Otherwise only the changed contributors' elements are compared with what
        // was committed.
        boolean fresh = state.fragments.isEmpty() && state.elements.isEmpty();
        if (fresh) {
            countedAll = true;
            computeAllElements();
        } else if (onlyNewContributors()) {
            computeAddedElements();
        } else {
            computeChangedElements();
        }
    }

    /**
     * Whether every contributor of the change is new to the table (none goes or changes) and
     * puts elements only into sets that stay, none of them an interval set, nor under a key a
     * transition keeps: then the elements are only added and counted, as a first sync's later
     * batches do.
     */
    private boolean onlyNewContributors() {
        for (Map.Entry<Contributor, Fragment> e : replaced.entrySet()) {
            if (e.getValue() == null || state.fragments.containsKey(e.getKey())) {
                return false;
            }
            for (String set : e.getValue().elements().keySet()) {
                NftSet def = setsAdded.containsKey(set) ? setsAdded.get(set) : state.sets.get(set);
                if (def == null || def.has(NfTablesUapi.NFT_SET_INTERVAL) || setsRemoved.containsKey(set)) {
                    return false;
                }
            }
        }
        // A new port that takes over a key a transition keeps, with its own value, which must
        // win: counted as a change (the added elements are counted, not compared).
        return state.transitions == 0 || !takesOverAKeptKey();
    }

    /** Whether a contributor of the change puts an element under a key some transition keeps. */
    private boolean takesOverAKeptKey() {
        for (Fragment f : replaced.values()) {
            if (f == null) {
                continue;
            }
            for (Map.Entry<String, List<SetElement>> els : f.elements().entrySet()) {
                Map<Bytes, Integer> kept = state.transitional.get(els.getKey());
                if (kept == null) {
                    continue;
                }
                PackedElements list = PackedElements.copyOf(els.getValue());
                for (int i = 0; i < list.size(); i++) {
                    if (kept.containsKey(PackedElements.key(list.bytes(), list.offset(i)))) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /**
     * Elements of contributors new to the table: each one the table and this change do not hold
     * yet is added; every one is counted into the committed table at apply, by reference to the
     * fragment's own packed bytes (the tally of a partial change would copy each: at 100,000
     * services a first sync in batches held 115 MB more after it than in one transaction).
     */
    private void computeAddedElements() {
        // Each set's table of the batch sized for all of the batch's elements at once: grown from
        // its first fragment's, it was rehashed a dozen times per set and batch.
        Map<String, Integer> expected = new HashMap<>();
        for (Fragment f : replaced.values()) {
            f.elements().forEach((set, els) -> expected.merge(set, els.size(), Integer::sum));
        }
        Map<String, ElementTable> seen = new HashMap<>();
        Map<String, List<PackedElements>> adds = new LinkedHashMap<>();
        countedInPlace = countInPlace;
        for (Fragment f : replaced.values()) {
            for (Map.Entry<String, List<SetElement>> els : f.elements().entrySet()) {
                String set = els.getKey();
                PackedElements list = PackedElements.copyOf(els.getValue());
                addedLists.computeIfAbsent(set, k -> new ArrayList<>()).add(list);
                ElementTable held = state.elements.get(set);
                IntPredicate isNew;
                if (countInPlace) {
                    if (held == null) {
                        held = new ElementTable(expected.get(set));
                        state.elements.put(set, held);
                        tablesCreated.add(set);
                    }
                    ElementTable into = held;
                    isNew = i -> into.addOrCount(list, i);
                } else {
                    ElementTable known = held;
                    ElementTable batch = seen.computeIfAbsent(set, k -> new ElementTable(expected.get(k)));
                    isNew = i -> (known == null || known.find(list.bytes(), list.offset(i)) < 0) && batch.addOrCount(list, i);
                }
                adds.computeIfAbsent(set, k -> new ArrayList<>()).add(newOnes(list, isNew));
            }
        }
        adds.forEach((set, lists) -> {
            List<SetElement> added = PackedSegments.of(lists);
            if (!added.isEmpty()) {
                elementsAdded.put(set, added);
            }
        });
    }

    /**
     * Elements when every one is counted again: straight into the committed tables, without
     * per-key tallies (this is the largest sync there is, so its transient memory is the daemon's
     * peak).
     */
    private void computeAllElements() {
        List<Fragment> all = new ArrayList<>();
        replaced.values().forEach(f -> all.add(f == null ? Fragment.EMPTY : f));
        state.fragments.forEach((id, f) -> {
            if (!replaced.containsKey(id)) {
                all.add(f);
            }
        });
        Map<String, Integer> expected = new HashMap<>();
        for (Fragment f : all) {
            f.elements().forEach((set, els) -> expected.merge(set, els.size(), Integer::sum));
        }
        // What the batch adds, per set: each fragment's own packed list when all of its elements
        // are new (nearly always), else a copy of the new ones; read as one list, never copied
        // whole (at 100k services a whole copy is hundreds of megabytes at the sync's peak).
        Map<String, List<PackedElements>> adds = new LinkedHashMap<>();
        for (Fragment f : all) {
            for (Map.Entry<String, List<SetElement>> els : f.elements().entrySet()) {
                String set = els.getKey();
                PackedElements list = PackedElements.copyOf(els.getValue());
                ElementTable table = allElements.computeIfAbsent(set, k -> new ElementTable(expected.get(k)));
                adds.computeIfAbsent(set, k -> new ArrayList<>()).add(newOnes(list, i -> table.addOrCount(list, i)));
            }
        }
        for (Map.Entry<String, List<PackedElements>> a : adds.entrySet()) {
            String set = a.getKey();
            List<SetElement> added = PackedSegments.of(a.getValue());
            if ((setsRemoved.containsKey(set) && !setsAdded.containsKey(set)) || added.isEmpty()) {
                continue;
            }
            elementsAdded.put(set, added);
        }
    }

    /**
     * The elements of {@code list} that {@code isNew} (asked once per element, in order) calls
     * new: {@code list} itself when all are (nearly always), else a copy of those.
     */
    private static PackedElements newOnes(PackedElements list, IntPredicate isNew) {
        PackedElements.Builder some = null;
        for (int i = 0; i < list.size(); i++) {
            boolean added = isNew.test(i);
            if (!added && some == null) {
                some = PackedElements.builder(); // one is not: copy the new ones before it, then go on
                for (int j = 0; j < i; j++) {
                    some.addPacked(list.bytes(), list.offset(j), list.length(j));
                }
            } else if (added && some != null) {
                some.addPacked(list.bytes(), list.offset(i), list.length(i));
            }
        }
        return some == null ? list : some.build();
    }

    /** Elements of the changed contributors only: per set and key, the contributions that go and come. */
    private void computeChangedElements() {
        Map<String, Map<Bytes, Tally>> tallies = new LinkedHashMap<>();
        for (Map.Entry<Contributor, Fragment> e : replaced.entrySet()) {
            Fragment old = state.fragments.getOrDefault(e.getKey(), Fragment.EMPTY);
            Fragment neu = e.getValue() == null ? Fragment.EMPTY : e.getValue();
            boolean transitional = e.getKey().isTransition();
            for (Map.Entry<String, List<SetElement>> els : old.elements().entrySet()) {
                Map<Bytes, Tally> t = tallies.computeIfAbsent(els.getKey(), k -> new HashMap<>());
                PackedElements list = PackedElements.copyOf(els.getValue());
                for (int i = 0; i < list.size(); i++) {
                    Tally tally = t.computeIfAbsent(PackedElements.key(list.bytes(), list.offset(i)), k -> new Tally());
                    tally.minus++;
                    if (transitional) {
                        tally.minusKept++;
                    }
                }
            }
            for (Map.Entry<String, List<SetElement>> els : neu.elements().entrySet()) {
                Map<Bytes, Tally> t = tallies.computeIfAbsent(els.getKey(), k -> new HashMap<>());
                for (SetElement el : els.getValue()) {
                    Tally tally = t.computeIfAbsent(el.key(), k -> new Tally());
                    tally.plus++;
                    if (transitional) {
                        tally.plusKept++;
                        tally.kept = el; // the latest change's
                    } else if (tally.first == null) {
                        tally.first = el;
                    }
                }
            }
        }
        for (Map.Entry<String, Map<Bytes, Tally>> st : tallies.entrySet()) {
            String set = st.getKey();
            boolean setGone = setsRemoved.containsKey(set) && !setsAdded.containsKey(set);
            boolean setNew = setsAdded.containsKey(set);
            ElementTable committed = state.elements.get(set);
            Map<Bytes, Kept> next = new HashMap<>(st.getValue().size() * 4 / 3 + 1);
            List<SetElement> adds = new ArrayList<>();
            List<SetElement> removes = new ArrayList<>();
            for (Map.Entry<Bytes, Tally> te : st.getValue().entrySet()) {
                Bytes k = te.getKey();
                Tally tally = te.getValue();
                int slot = committed == null ? -1 : committed.find(k);
                int oldRefs = slot < 0 ? 0 : committed.refs(slot);
                SetElement was = slot < 0 ? null : committed.element(slot);
                int refs = oldRefs - tally.minus + tally.plus;
                // A service port's own element wins over what a change keeps for packets
                // crossing its commit (a frontend taken over by another port, say), and a later
                // change's kept element over an earlier one's: the kept value only where no
                // port holds the key.
                int portRefs = oldRefs - state.transitionalRefs(set, k) - (tally.minus - tally.minusKept)
                        + (tally.plus - tally.plusKept);
                SetElement el = tally.first != null ? tally.first
                        : was != null && portRefs > 0 ? was
                        : tally.kept != null ? tally.kept : was;
                next.put(k, refs > 0 ? new Kept(el, refs) : null);
                boolean present = oldRefs > 0 && !setNew;
                if (refs <= 0) {
                    if (present && !setGone) {
                        removes.add(was);
                    }
                } else if (!present) {
                    adds.add(el);
                } else if (!el.equals(was)) {
                    removes.add(was);
                    adds.add(el);
                }
            }
            NftSet def = setNew ? setsAdded.get(set) : state.sets.get(set);
            if (def != null && def.has(NfTablesUapi.NFT_SET_INTERVAL) && !def.rangeConcat() && !setGone) {
                // Whole ranges, in an order the kernel's element-by-element overlap check accepts.
                if (committed != null && !setNew) {
                    Map<Bytes, SetElement> changed = new HashMap<>();
                    next.forEach((k, v) -> changed.put(k, v == null ? null : v.element()));
                    IntervalRanges.Change c = IntervalRanges.of(committed.elements(), changed);
                    adds = c.adds();
                    removes = c.removes();
                } else {
                    adds.sort(SetElement.INTERVAL_ORDER);
                }
            }
            if (!adds.isEmpty()) {
                elementsAdded.put(set, adds);
            }
            if (!removes.isEmpty()) {
                elementsRemoved.put(set, removes);
            }
            changedElements.put(set, next);
        }
    }

    /** Appends this delta's operations, in a kernel-acceptable order. */
    void write(Transaction tx) {
        Family fam = state.table.family();
        String t = state.table.name();
        // 1. Drop references: flush chains that change or go, and elements that go or change.
        for (DesiredChain c : chainsChanged.values()) {
            tx.flush(c.chain());
        }
        for (Chain c : chainsRemoved.values()) {
            tx.flush(c);
        }
        elementsRemoved.forEach((set, els) -> tx.delete(new Elements(fam, t, set, els)));
        // 2. Delete what is no longer referenced: sets first, since a verdict map's elements
        // reference chains that go with it.
        for (NftSet s : setsRemoved.values()) {
            tx.delete(s);
        }
        for (Chain c : chainsRemoved.values()) {
            tx.delete(c);
        }
        // 3. Create what new references will point to, then the references.
        for (NftSet s : setsAdded.values()) {
            tx.add(s);
        }
        for (DesiredChain c : chainsAdded.values()) {
            tx.add(c.chain());
        }
        for (DesiredChain c : chainsChanged.values()) {
            if (c.chain().isBase()) {
                tx.add(c.chain());
            }
        }
        for (DesiredChain c : chainsAdded.values()) {
            for (Rule r : c.rules()) {
                tx.add(r);
            }
        }
        for (DesiredChain c : chainsChanged.values()) {
            for (Rule r : c.rules()) {
                tx.add(r);
            }
        }
        elementsAdded.forEach((set, els) -> {
            if (!els.isEmpty()) {
                tx.add(new Elements(fam, t, set, els));
            }
        });
    }

    /**
     * The kernel did not take the transaction: what this delta counted into the committed tables
     * is taken out again, which leaves them as they were before it. Nothing to do for a delta
     * that counts at {@link #apply}.
     */
    void discard() {
        if (!countedInPlace) {
            return;
        }
        addedLists.forEach((set, lists) -> {
            ElementTable held = state.elements.get(set);
            for (PackedElements list : lists) {
                for (int i = 0; i < list.size(); i++) {
                    held.uncount(list.bytes(), list.offset(i));
                }
            }
            if (tablesCreated.contains(set)) {
                state.elements.remove(set);
            }
        });
        countedInPlace = false;
    }

    /** After the kernel accepted the transaction: make it the committed state. */
    void apply() {
        replaced.forEach((id, f) -> {
            TableState.countOnDemand(state.onDemand, state.fragments.get(id), -1);
            TableState.countOnDemand(state.onDemand, f, +1);
            Fragment was = f == null ? state.fragments.remove(id) : state.fragments.put(id, f);
            if (id.isTransition()) {
                state.transitions += (f == null ? 0 : 1) - (was == null ? 0 : 1);
                state.countTransitional(was, -1);
                state.countTransitional(f, +1);
            }
        });
        chainsRemoved.keySet().forEach(n -> {
            state.removeChain(n);
            state.chainOwner.remove(n);
        });
        chainsAdded.values().forEach(state::putChain);
        chainsChanged.values().forEach(state::putChain);
        state.chainOwner.putAll(newOwners);
        setsRemoved.keySet().forEach(n -> {
            state.sets.remove(n);
            state.elements.remove(n);
            state.transitional.remove(n);
            state.unmanagedSets.remove(n);
        });
        setsAdded.forEach(state.sets::put);
        replaced.values().stream().filter(Objects::nonNull).forEach(f -> state.unmanagedSets.addAll(f.unmanagedSets()));
        if (countedAll) {
            // Counted afresh: the new tables replace the committed ones whole.
            state.elements.clear();
            allElements.forEach((set, table) -> {
                if (state.sets.containsKey(set)) {
                    state.elements.put(set, table);
                }
            });
            return;
        }
        addedLists.forEach((set, lists) -> {
            if (countedInPlace || !state.sets.containsKey(set)) {
                return;
            }
            ElementTable target = state.elements.computeIfAbsent(set,
                    k -> new ElementTable(lists.stream().mapToInt(PackedElements::size).sum()));
            for (PackedElements list : lists) {
                for (int i = 0; i < list.size(); i++) {
                    target.addOrCount(list, i);
                }
            }
        });
        changedElements.forEach((set, m) -> {
            if (!state.sets.containsKey(set)) {
                return;
            }
            ElementTable target = state.elements.computeIfAbsent(set, k -> new ElementTable(m.size()));
            m.forEach((k, v) -> {
                if (v == null) {
                    target.remove(k);
                } else {
                    target.put(v.element(), v.refs());
                }
            });
        });
    }

    /** An element kept after the change, with the number of fragments that contribute it. */
    private record Kept(SetElement element, int refs) {
    }

    /**
     * How many contributions of one element go and come in this change, the first that comes
     * from a service port and the last a transition keeps.
     */
    private static final class Tally {
        int minus;
        int plus;
        /** Of minus and plus, those of transitional contributors. */
        int minusKept;
        int plusKept;
        SetElement first;
        SetElement kept;
    }

    int changedChains() {
        return chainsAdded.size() + chainsChanged.size() + chainsRemoved.size();
    }
}
