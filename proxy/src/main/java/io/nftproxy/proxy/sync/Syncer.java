package io.nftproxy.proxy.sync;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.BiPredicate;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftKernel;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.TransactionException;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.DesiredChain;
import io.nftproxy.proxy.render.Fragment;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.plan.StickyTimeout;

/**
 * Brings the kernel to the desired state in one atomic transaction per sync. The first sync
 * writes our tables in small transactions: onto a node without them service by service
 * ({@link FirstSyncBatches}), over those of a previous run beside them, switched to in one small
 * transaction ({@link Takeover}), so that no moment is without rules and no other nftables user of
 * the node waits for the whole ruleset; later ones send only what changed, computed against what
 * we committed, which we keep in memory.
 * A service whose objects the kernel refuses is left out, named in the log, and the rest goes in;
 * the kernel keeps the last good ruleset throughout.
 */
public final class Syncer implements Backend {
    private static final Logger LOG = LoggerFactory.getLogger(Syncer.class);
    private static final int MAX_EXCLUSIONS_PER_SYNC = 8;

    private final NftKernel client;
    private final NftRenderer renderer;
    private final String tableName;
    /** What the kernel holds of ours, as we committed it; read by the counters' scrape too ({@link #heldKeys}). */
    private final Committed committed = new Committed();
    /** Service ports left out, retried when they change. */
    private final Refusals refusals = new Refusals();
    /** Where a first sync takes its endpoints' indices from (tests: see {@link #takeIndicesFrom}). */
    private final Map<IpFamily, TableState> indicesFrom = new EnumMap<>(IpFamily.class);
    /**
     * Each change's transitional elements ({@link Contributor#transitionOf}), to when they go
     * ({@link #clock}), the soonest first: a deadline is always now + GRACE. Only its head is
     * read, so that a sync at 100,000 services after thousands of recent changes walks none of
     * them. One contributor per change, not per port: a port under constant churn would otherwise
     * keep its elements for ever and send them all again with each change.
     */
    private final LinkedHashMap<Contributor, Long> transitionsUntil = new LinkedHashMap<>();
    /** The number of the last change that kept transitional elements. */
    private long transitions;
    /** The transitional contributors the sync being prepared takes away. */
    private final Set<Contributor> expiring = new HashSet<>();
    /** The numbers the sync being prepared gives its changes' transitional elements, by port (the same in each family). */
    private final Map<ServicePortName, Long> transitionNumbers = new HashMap<>();
    /** What tells when transitional elements go: System.nanoTime, a test's own time. */
    private LongSupplier clock = System::nanoTime;
    /**
     * The names our sets and chains carry in the kernel now ({@link Generation}): what we hold and
     * what the renderer gives carry generation 0's, renamed on their way to the kernel. Read by the
     * counters' scrape on another thread.
     */
    private volatile Generation generation = Generation.FIRST;
    private Committer committer;
    /** How a re-assertion's repair transactions reach the kernel. */
    private Committer resendCommitter;

    /** How a transaction reaches the kernel (the drift watcher commits without listening). */
    @FunctionalInterface
    public interface Committer {
        CommitStats commit(Transaction tx) throws NftException;
    }

    /**
     * Objects (elements, rules, chains, sets) in one transaction of a first sync onto a node
     * without our tables ({@link FirstSyncBatches}); see docs/benchmarks.md for how long another
     * nftables user waits for one.
     */
    public static final int FIRST_SYNC_BATCH = 4096;
    private int firstSyncBatch = FIRST_SYNC_BATCH;

    public Syncer(NftKernel client, NftRenderer renderer, String tableName) {
        this.client = client;
        this.renderer = renderer;
        this.tableName = tableName;
        this.committer = client == null ? tx -> {
            throw new IllegalStateException("no kernel client: give a committer");
        } : client::commit;
        this.resendCommitter = committer;
    }

    /**
     * Makes this syncer's first sync give endpoints the indices {@code other} holds them at, and
     * nothing else of it: a full sync's table to compare, as a test, with the table {@code other}
     * reached through partial syncs (indices depend on history; see render/EndpointSlots).
     */
    void takeIndicesFrom(Syncer other) {
        indicesFrom.putAll(other.committed.tables());
    }

    /** Cuts a first sync onto a node without our tables into transactions of about {@code objects}; 0: one transaction. */
    public void firstSyncBatch(int objects) {
        this.firstSyncBatch = objects;
    }

    /** Sends every later commit through {@code c}. */
    public void commitThrough(Committer c) {
        commitThrough(c, c);
    }

    /** Sends syncs' commits through {@code c}, a re-assertion's repair transactions through {@code resend}. */
    public void commitThrough(Committer c, Committer resend) {
        this.committer = c;
        this.resendCommitter = resend;
    }

    @Override
    public void forgetCommitted() {
        committed.forget();
        transitionsUntil.clear(); // what they kept went with the tables, or goes with the rebuild
    }

    /** Nothing held (a sync failed half-way): the next sync replaces our tables whole. */
    private void clearCommitted() {
        committed.clear();
        transitionsUntil.clear();
    }

    /**
     * How many elements we hold in one of our sets (0 when we hold no such set): for a reader on
     * another thread, the counters' scrape, choosing how to read the set.
     */
    public int heldCount(IpFamily f, String set) {
        return committed.read(f, set, ElementTable::size, 0);
    }

    /**
     * The keys of the elements we hold in one of our sets, as the kernel took them: for a reader
     * on another thread, the counters' scrape, to ask the kernel for them by key. A sync may
     * change the set right after.
     */
    public List<Bytes> heldKeys(IpFamily f, String set) {
        return committed.read(f, set, ElementTable::keys, List.of());
    }

    /** The generation of names our sets and chains carry in the kernel now. */
    public Generation generation() {
        return generation;
    }

    /** Whether the next sync must be full (nothing committed yet). */
    @Override
    public boolean needsFull() {
        return committed.isEmpty();
    }

    /**
     * One attempt at a sync's transaction, and what to record once the kernel took it (the
     * families whose table it deletes among them).
     */
    private record Attempt(Transaction tx, Map<IpFamily, Delta> deltas, Map<IpFamily, TableState> fresh,
                           Set<IpFamily> dropped, Map<String, Contributor> chainOwners, long renderNanos,
                           Supplier<Attempt> then) {
        /** This attempt's structure, and {@code then} the rest, built once the kernel holds it. */
        Attempt followedBy(Supplier<Attempt> rest) {
            return new Attempt(tx, deltas, fresh, dropped, chainOwners, renderNanos, rest);
        }
    }

    /**
     * Syncs {@code state}. {@code changed} names the service ports whose service or endpoints
     * changed since the last sync; null asks for a full sync (everything re-sent). A service port
     * whose objects the kernel refuses is left out and the rest sent again, up to
     * {@value #MAX_EXCLUSIONS_PER_SYNC} times.
     */
    @Override
    public SyncResult sync(ProxyState state, Set<ServicePortName> changed) throws NftException {
        SyncPlan plan = plan(state, changed);
        // Refused services are retried when the service or its endpoints change.
        refusals.retryChanged(state);
        if (plan.kind() == SyncPlan.Kind.REPLACE && firstSyncBatch > 0 && client != null) {
            if (noTablesOfOurs()) {
                return replaceInBatches(plan, state, Generation.FIRST, false);
            }
            WrittenBeside.Taken taken = new WrittenBeside(client, tableName, committer, committed, firstSyncBatch)
                    .takeOver(next -> replaceInBatches(plan, state, next, true), this::clearCommitted, g -> generation = g);
            if (taken != null) {
                return taken.result();
            }
        }
        List<String> rejected = new ArrayList<>();
        // What earlier commits of this sync did (a structure committed first, an attempt's first
        // stage before a refusal): counted in its result.
        CommitStats before = CommitStats.EMPTY;
        int chainsBefore = 0;
        for (int attempt = 0; ; attempt++) {
            Attempt a = prepare(plan, state, rejected);
            try {
                // The chains and sets a change's elements lead into, committed before them (see
                // #structureFirst); what the kernel then holds is the state the rest is built on.
                while (a.then() != null) {
                    before = before.plus(committer.commit(generation.apply(a.tx())));
                    chainsBefore += applyCommitted(a);
                    a = a.then().get();
                }
                // A replacement in one transaction creates our tables anew, in generation 0.
                CommitStats st = committer.commit(plan.kind() == SyncPlan.Kind.REPLACE ? a.tx() : generation.apply(a.tx()));
                if (plan.kind() == SyncPlan.Kind.REPLACE) {
                    generation = Generation.FIRST;
                }
                SyncResult r = recordCommitted(plan, a, before.plus(st), chainsBefore, state, rejected);
                return plan.kind() == SyncPlan.Kind.REASSERT ? reassert(r) : r;
            } catch (TransactionException e) {
                if (attempt >= MAX_EXCLUSIONS_PER_SYNC || !leaveOut(e, a, plan, state, rejected)) {
                    throw e;
                }
            }
        }
    }

    /** What this sync does, from what we hold and what changed ({@link SyncPlan#of}). */
    private SyncPlan plan(ProxyState state, Set<ServicePortName> changed) {
        return SyncPlan.of(committed.held(), state, changed, renderer.config());
    }

    /** Per family, the fragments of the plan's ports that differ from what we hold. */
    private Rendered render(SyncPlan plan, ProxyState state, List<String> rejected) {
        long t0 = System.nanoTime();
        long now = clock.getAsLong();
        expiring.clear();
        transitionNumbers.clear();
        Map<IpFamily, Map<Contributor, Fragment>> byFamily = new EnumMap<>(IpFamily.class);
        Map<IpFamily, TableState> fresh = new EnumMap<>(IpFamily.class);
        Map<String, Contributor> chainOwners = new HashMap<>();
        Map<IpFamily, Set<String>> demands = new EnumMap<>(IpFamily.class);
        for (IpFamily f : plan.families()) {
            TableState ts = committed.get(f);
            if (ts == null) {
                ts = new TableState(f, new Table(f.nft(), tableName));
                fresh.put(f, ts);
            }
            Map<Contributor, Fragment> changes = new LinkedHashMap<>();
            // The on-demand global sets the services will fill once this sync is in, counted as
            // Delta#apply will count them (a fresh table counts from nothing).
            SortedMap<String, Integer> demand = new TreeMap<>(ts.onDemand);
            // Fragments rendered from the same inputs are reused: from what we committed, or,
            // when rebuilding, from what we committed before forgetting it.
            TableState reuse = fresh.containsKey(f) ? committed.forgotten(f) : ts;
            ProxyState renderedFrom = fresh.containsKey(f) ? committed.forgottenState() : committed.lastState();
            // What earlier changes kept for packets crossing their commits, now past its time.
            int expiringHere = 0;
            for (Map.Entry<Contributor, Long> e : transitionsUntil.entrySet()) {
                if (now - e.getValue() < 0) {
                    break;
                }
                expiring.add(e.getKey());
                if (ts.fragments.containsKey(e.getKey())) {
                    TableState.countOnDemand(demand, ts.fragments.get(e.getKey()), -1);
                    changes.put(e.getKey(), null);
                    expiringHere++;
                }
            }
            // What earlier changes keep past this commit, which a packet crossing it could find.
            TableState held = ts;
            BiPredicate<String, Bytes> kept = ts.transitions == expiringHere ? null // nothing kept
                    : (set, key) -> held.transitionalRefs(set, key) > 0;
            List<ServicePortName> crossed = new ArrayList<>();
            for (ServicePortName id : plan.ports()) {
                Contributor who = Contributor.of(id);
                ServicePort svc = state.services().get(id);
                Fragment frag = svc == null || refusals.leftOut(id) ? null
                        : reuse != null && unchanged(renderedFrom, id, svc, state) && reuse.fragments.containsKey(who)
                        ? reuse.fragments.get(who) // a full sync re-sends it; no need to render it again
                        : render(f, svc, state, heldBy(reuse != null ? reuse : indicesFrom.get(f), who), rejected);
                if (frag == Fragment.EMPTY) {
                    frag = null;
                }
                if (frag != null) {
                    for (String chain : frag.chains().keySet()) {
                        chainOwners.put(chain, who);
                    }
                }
                if (frag != null && !fresh.containsKey(f) && frag == ts.fragments.get(who)) {
                    continue; // the very fragment we hold: nothing of it changes (a re-assertion re-sends it later)
                }
                if (frag != null || ts.fragments.containsKey(who)) {
                    TableState.countOnDemand(demand, ts.fragments.get(who), -1);
                    TableState.countOnDemand(demand, frag, +1);
                    changes.put(who, frag);
                    if (!fresh.containsKey(f) && ts.fragments.containsKey(who)) {
                        crossed.add(id);
                    }
                }
            }
            // What each changed port's commit leaves for the packets crossing it, once every new
            // fragment is known: a frontend one port lets go may be another's in the same sync.
            Map<Contributor, Fragment> ported = changes;
            NftRenderer.Crossings crossings = NftRenderer.crossings(() -> ported.entrySet().stream()
                    .filter(e -> e.getValue() != null && !e.getKey().isTransition()).map(Map.Entry::getValue).toList(), kept);
            for (ServicePortName id : crossed) {
                keepForCrossing(ts, id, changes.get(Contributor.of(id)), crossings, changes, demand, now);
            }
            Fragment globals = ts.fragments.get(Contributor.GLOBALS);
            if (plan.globals() || globals == null || !demand.keySet().equals(globals.declares())) {
                // Sent first: what the services' elements go into comes before them.
                Map<Contributor, Fragment> withGlobals = new LinkedHashMap<>();
                withGlobals.put(Contributor.GLOBALS, renderer.globals(f, state,
                        new TreeSet<>(plan.stickyTimeouts().keySet()), demand.keySet()));
                withGlobals.putAll(changes);
                changes = withGlobals;
            }
            byFamily.put(f, changes);
            demands.put(f, demand.keySet());
        }
        return new Rendered(byFamily, fresh, chainOwners, System.nanoTime() - t0, demands);
    }

    /**
     * What a port's change from the fragment we hold to {@code frag} (null: it goes) leaves in
     * place for {@link NftRenderer#CROSSING_GRACE}, for packets that cross its commit: a contributor of its
     * own, numbered after the changes before it (in every family the same number).
     */
    private void keepForCrossing(TableState ts, ServicePortName id, Fragment frag, NftRenderer.Crossings crossings,
                                 Map<Contributor, Fragment> changes, SortedMap<String, Integer> demand, long now) {
        Fragment old = ts.fragments.get(Contributor.of(id));
        boolean structureStays = old.demands().stream().allMatch(set -> demand.getOrDefault(set, 0) > 0);
        Fragment crossing = crossings.between(old, frag, ts.onDemand.keySet(), structureStays);
        if (addsKeys(ts.onDemand, demand)) {
            // The trees grow in this sync: committed first (structureFirst), the growth is in the
            // generation the elements' commit leaves, and a crossing packet may walk it. Kept for
            // the trees as they are and as they will be, whichever the commits turn out to be.
            Set<String> grown = new TreeSet<>(ts.onDemand.keySet());
            grown.addAll(demand.keySet());
            crossing = NftRenderer.Crossings.merged(crossing, crossings.between(old, frag, grown, structureStays));
        }
        if (crossing == Fragment.EMPTY) {
            return;
        }
        Contributor tc = Contributor.transitionOf(id, transitionNumber(id));
        TableState.countOnDemand(demand, crossing, +1);
        changes.put(tc, crossing);
        transitionsUntil.put(tc, now + NftRenderer.CROSSING_GRACE.toNanos());
    }

    /**
     * Whether {@code after} has a key {@code before} lacks: both sorted, walked once side by side
     * (asked for every changed port of a sync; a lookup per key was n log n on that path).
     */
    static boolean addsKeys(SortedMap<String, Integer> before, SortedMap<String, Integer> after) {
        if (after.size() > before.size()) {
            return true;
        }
        Iterator<String> had = before.keySet().iterator();
        String h = had.hasNext() ? had.next() : null;
        for (String k : after.keySet()) {
            while (h != null && h.compareTo(k) < 0) {
                h = had.hasNext() ? had.next() : null;
            }
            if (h == null || !h.equals(k)) {
                return true;
            }
        }
        return false;
    }

    /** The number this sync's change of {@code id} keeps its transitional elements under: one per port and sync. */
    private long transitionNumber(ServicePortName id) {
        return transitionNumbers.computeIfAbsent(id, k -> ++transitions);
    }

    /**
     * Whether our objects carry the second generation's names ({@link Generation#SUFFIX}): a
     * takeover beside our tables went there, and the sync loop takes the names of docs/ruleset.md
     * back by one more takeover.
     */
    @Override
    public boolean underOtherNames() {
        return generation.number() != 0;
    }

    /** The time transitional elements are kept by, in nanoseconds (tests: their own, advanced at will). */
    public void clock(LongSupplier nanoTime) {
        clock = nanoTime;
    }

    /**
     * The earliest time some transitional elements are due to go ({@link NftRenderer#CROSSING_GRACE} after
     * the change that kept them), or {@link Backend#NOTHING_DUE}: the sync loop syncs then.
     */
    @Override
    public long dueNanos() {
        return transitionsUntil.isEmpty() ? NOTHING_DUE : transitionsUntil.values().iterator().next();
    }

    /** The transaction of one attempt: per family, the delta from what we hold to the fragments of the plan's ports. */
    private Attempt prepare(SyncPlan plan, ProxyState state, List<String> rejected) {
        Rendered r = render(plan, state, rejected);
        Map<IpFamily, Map<Contributor, Fragment>> structure = structureFirst(plan, state, r);
        if (structure == null) {
            return build(plan, r, r.changes());
        }
        // Then every change as rendered, but the ones the first commit took whole (the globals').
        Map<IpFamily, Map<Contributor, Fragment>> rest = new EnumMap<>(IpFamily.class);
        r.changes().forEach((f, changes) -> {
            Map<Contributor, Fragment> left = new LinkedHashMap<>(changes);
            structure.getOrDefault(f, Map.of()).forEach((who, first) -> left.remove(who, first));
            rest.put(f, left);
        });
        return build(plan, r, structure).followedBy(() -> build(plan, r, rest));
    }

    /**
     * The globals' changes of a partial sync (or a re-assertion's) that only add chains and sets (a kind's first
     * frontend brings its tree, a port's count its bucket), to commit before the elements that
     * lead into them; null when there are none, or nothing else changes. In one transaction, a
     * connection whose first packet crosses the commit can find the frontend's new elements (a
     * set it looks up after the flip) while it walks the old rules, which have no way into the
     * new chains yet: it leaves un-NATed (FirstOfAKindUnderLoadKernelTest: an external IP's first
     * flip to policy Local lost connections). Committed first, the new chains are in both
     * generations the elements' commit flips between. The same for a port's chains of its own
     * (past 1,024 endpoints), which its verdict element in {@code service-chains} leads into:
     * they come first with the port's old elements, the new ones after; and for a block of a
     * tree past 1,024 endpoints, which a verdict element leads into. Only growth goes first:
     * removals (chains and sets no frontend leads into any more) stay where they are, after the
     * elements go; globals that grow as they shrink (a block comes as another goes) send first
     * the globals of the old and the new demand together, or failing that their growth beside all
     * they had ({@link #withAdditions}).
     */
    private Map<IpFamily, Map<Contributor, Fragment>> structureFirst(SyncPlan plan, ProxyState state, Rendered r) {
        // A partial sync's, or the change a re-assertion sends first as a partial sync would.
        if (plan.kind() == SyncPlan.Kind.REPLACE || !r.fresh().isEmpty()) {
            return null;
        }
        Map<IpFamily, Map<Contributor, Fragment>> out = new EnumMap<>(IpFamily.class);
        for (Map.Entry<IpFamily, Map<Contributor, Fragment>> e : r.changes().entrySet()) {
            TableState ts = committed.get(e.getKey());
            if (ts == null) {
                continue;
            }
            Map<Contributor, Fragment> first = new LinkedHashMap<>();
            e.getValue().forEach((who, neu) -> {
                Fragment old = ts.fragments.get(who);
                if (neu != null && old != null && who.equals(Contributor.GLOBALS) && e.getValue().size() > 1
                        && !grows(old, neu)) {
                    // Growth beside shrinkage (a block of a tree comes as another goes): the globals
                    // of what was and what comes together first (every chain that was, the trees'
                    // roots asking for the new blocks too), the rest with the elements. A verdict
                    // element may lead into a new block's tree, and a packet that misses a verdict
                    // after the flip meets the root: both must know the new block in the
                    // generation the elements' commit leaves (PickTree.Shape#reachedAndReads).
                    Set<String> both = new TreeSet<>(ts.onDemand.keySet());
                    both.addAll(r.demands().getOrDefault(e.getKey(), Set.of()));
                    SortedSet<StickyTimeout> timeouts = new TreeSet<>(committed.stickyTimeouts());
                    timeouts.addAll(plan.stickyTimeouts().keySet());
                    Fragment union = renderer.globals(e.getKey(), state, timeouts, both);
                    if (!grows(old, union)) {
                        union = withAdditions(old, neu); // old rules, new chains beside them
                    }
                    if (grows(old, union)) {
                        first.put(who, union);
                    }
                    return;
                }
                if (neu == null || who.isTransition() || !grows(old == null ? Fragment.EMPTY : old, neu)) {
                    return;
                }
                if (who.equals(Contributor.GLOBALS)) {
                    if (old != null && e.getValue().size() > 1) {
                        first.put(who, neu);
                    }
                } else if ((old == null || old.chains().isEmpty())
                        && neu.chains().keySet().stream().noneMatch(ts.chains::containsKey)) {
                    // (Not when another port holds a chain of the same name, as a port renamed in
                    // this sync does: it goes with that port's elements, in the same commit.)
                    // Its chains, with the elements it had: nothing leads into them yet. (A port
                    // that has chains already changes them with its elements, in one commit: its
                    // rules may look up elements the change brings.)
                    first.put(who, new Fragment(neu.chains(), neu.sets(), old == null ? Map.of() : old.elements(),
                            neu.unmanagedSets(), old == null ? neu.slots() : old.slots()));
                }
            });
            if (!first.isEmpty()) {
                out.put(e.getKey(), first);
            }
        }
        return out.isEmpty() ? null : out;
    }

    /**
     * {@code old} with the chains and sets of {@code neu} it lacks (and those sets' elements): each
     * of {@code old}'s as it was, so that what traffic meets does not change, and what is new is
     * in place, unreachable but for elements yet to come.
     */
    static Fragment withAdditions(Fragment old, Fragment neu) {
        Map<String, DesiredChain> chains = new LinkedHashMap<>(old.chains());
        neu.chains().forEach(chains::putIfAbsent);
        Map<String, NftSet> sets = new LinkedHashMap<>(old.sets());
        neu.sets().forEach(sets::putIfAbsent);
        Map<String, List<SetElement>> elements = new LinkedHashMap<>(old.elements());
        neu.elements().forEach((set, els) -> {
            if (!old.sets().containsKey(set)) {
                elements.put(set, els);
            }
        });
        Set<String> unmanaged = new HashSet<>(old.unmanagedSets());
        neu.unmanagedSets().stream().filter(set -> !old.sets().containsKey(set)).forEach(unmanaged::add);
        return new Fragment(chains, sets, elements, unmanaged, old.slots());
    }

    /** Whether {@code neu} holds every chain and set of {@code old}, each set as it was, and a chain or set more. */
    private static boolean grows(Fragment old, Fragment neu) {
        if (!neu.chains().keySet().containsAll(old.chains().keySet())
                || neu.chains().size() == old.chains().size() && neu.sets().size() == old.sets().size()) {
            return false;
        }
        for (Map.Entry<String, NftSet> set : old.sets().entrySet()) {
            if (!set.getValue().equals(neu.sets().get(set.getKey()))) {
                return false;
            }
        }
        return true;
    }

    /** The transaction of {@code changes} (per family), with the deltas to record once the kernel took it. */
    private Attempt build(SyncPlan plan, Rendered r, Map<IpFamily, Map<Contributor, Fragment>> changes) {
        long t0 = System.nanoTime();
        Transaction tx = new Transaction();
        Map<IpFamily, Delta> deltas = new EnumMap<>(IpFamily.class);
        Set<IpFamily> dropped = EnumSet.noneOf(IpFamily.class);
        for (IpFamily f : IpFamily.values()) {
            if (!plan.families().contains(f)) {
                TableState gone = committed.get(f);
                if (gone != null) {
                    tx.delete(gone.table); // the last thing of this family went
                    dropped.add(f);
                } else if (plan.kind() == SyncPlan.Kind.REPLACE) {
                    Table t = new Table(f.nft(), tableName);
                    tx.add(t).delete(t); // whatever a previous run left in this family goes
                }
                continue;
            }
            TableState ts = r.fresh().containsKey(f) ? r.fresh().get(f) : committed.get(f);
            if (r.fresh().containsKey(f)) {
                // add + delete + add: replaces whatever a previous run left, atomically.
                tx.add(ts.table).delete(ts.table).add(ts.table);
            }
            Delta d = new Delta(ts, changes.getOrDefault(f, Map.of()));
            d.write(tx);
            deltas.put(f, d);
        }
        return new Attempt(tx, deltas, r.fresh(), dropped, r.chainOwners(), r.renderNanos() + System.nanoTime() - t0, null);
    }

    /** Whether the kernel holds none of our tables: then nothing of ours carries traffic yet. */
    private boolean noTablesOfOurs() throws NftException {
        for (IpFamily f : IpFamily.values()) {
            if (client.hasTable(f.nft(), tableName)) {
                return false;
            }
        }
        return true;
    }

    /**
     * A table written whole in batches ({@link BatchedReplace}): a first sync onto a node without
     * our tables, or ({@code beside}) in generation {@code g} beside the generation in use, for a
     * takeover ({@link WrittenBeside}). A service the kernel refuses is left out; when a
     * transaction fails otherwise, the services before it stay in the kernel and what we hold is
     * cleared: the retry replaces our tables whole.
     */
    private SyncResult replaceInBatches(SyncPlan plan, ProxyState state, Generation g, boolean beside)
            throws NftException {
        List<String> rejected = new ArrayList<>();
        Rendered r = render(plan, state, rejected);
        BatchedReplace.Written w;
        try {
            w = new BatchedReplace(committed, refusals, tableName, committer, firstSyncBatch, MAX_EXCLUSIONS_PER_SYNC)
                    .write(plan, r, state, g, beside, rejected);
        } catch (NftException | RuntimeException e) {
            // The kernel holds the services of the batches it took; the next sync replaces them whole.
            clearCommitted();
            throw e;
        }
        return synced(plan, state, w.commits(), w.changedChains(), rejected, r.renderNanos() + w.prepareNanos());
    }

    /**
     * A re-assertion's repair after its sync ({@link Reassertion}): when it fails, what we hold
     * is forgotten, so that the retry rebuilds our tables whole.
     */
    private SyncResult reassert(SyncResult r) throws NftException {
        CommitStats repaired;
        try {
            repaired = Reassertion.repair(committed, generation, resendCommitter, client);
        } catch (NftException e) {
            forgetCommitted();
            throw e;
        }
        return new SyncResult(true, r.commit().plus(repaired), r.changedChains(), r.chains(), r.rules(), r.elements(),
                r.rejectedServices(), r.renderNanos(), false);
    }

    /** After the kernel took an attempt's transaction: what it holds now is what we recorded. */
    private SyncResult recordCommitted(SyncPlan plan, Attempt a, CommitStats st, int chainsBefore, ProxyState state,
                                       List<String> rejected) {
        int changedChains = chainsBefore + applyCommitted(a);
        // The deadlines of the transitions this sync took away are done with.
        expiring.forEach(transitionsUntil::remove);
        expiring.clear();
        return synced(plan, state, st, changedChains, rejected, a.renderNanos());
    }

    /** What the kernel took of an attempt becomes the state we hold; the chains it changed. */
    private int applyCommitted(Attempt a) {
        int changedChains = 0;
        try (Committed.Writing w = committed.writing()) {
            committed.replace(a.fresh(), a.dropped());
            for (Delta d : a.deltas().values()) {
                d.apply();
                changedChains += d.changedChains();
            }
        }
        return changedChains;
    }

    /** Once the kernel holds all of a sync: it is the state we hold, and what it did. */
    private SyncResult synced(SyncPlan plan, ProxyState state, CommitStats st, int changedChains, List<String> rejected,
                              long renderNanos) {
        committed.synced(state, plan);
        return new SyncResult(plan.full(), st, changedChains, committed.count(TableState::chainCount),
                committed.count(TableState::ruleCount), committed.count(TableState::elementCount), rejected, renderNanos);
    }

    /**
     * The kernel refused an operation: when it belongs to a service port, that port is left out
     * until it changes (named in the log) and the sync tried again; false when it belongs to none.
     */
    private boolean leaveOut(TransactionException e, Attempt a, SyncPlan plan, ProxyState state, List<String> rejected) {
        ServicePortName culprit = Refusals.ownerOf(e, a.chainOwners(), committed);
        if (culprit == null) {
            return false;
        }
        refusals.kernelRefused(culprit, state, e.getMessage(), rejected);
        plan.ports().add(culprit);
        return true;
    }

    /**
     * A service port's fragment, or null when it cannot be rendered: a value the kernel would
     * refuse, found before the transaction, or any failure of the renderer on this service's
     * inputs (a defect must cost one service, not every sync). That service is left out until it
     * changes, named in the log, and the rest of the sync goes on.
     */
    private Fragment render(IpFamily f, ServicePort svc, ProxyState state, Fragment previous, List<String> rejected) {
        try {
            return renderer.service(f, svc, state.endpointsOf(svc.id()), state.node(), previous);
        } catch (RuntimeException e) {
            refusals.renderFailed(svc.id(), state, e, rejected);
            return null;
        }
    }

    /** A port's fragment in what we committed (or, rebuilding, had committed): its next keeps its endpoints' indices. */
    private static Fragment heldBy(TableState held, Contributor who) {
        return held == null ? null : held.fragments.get(who);
    }

    /** Whether a service port's inputs are those it was rendered from in {@code from}. */
    private static boolean unchanged(ProxyState from, ServicePortName id, ServicePort svc, ProxyState state) {
        return from != null && from.node().equals(state.node()) && svc.equals(from.services().get(id))
                && from.endpointsOf(id).equals(state.endpointsOf(id));
    }

    /** Deletes our tables (and forgets what we committed). Needs the client. */
    public void cleanup() throws NftException {
        Transaction tx = new Transaction();
        for (IpFamily f : IpFamily.values()) {
            Table t = new Table(f.nft(), tableName);
            tx.add(t).delete(t);
        }
        client.commit(tx);
        clearCommitted();
        generation = Generation.FIRST;
    }
}
