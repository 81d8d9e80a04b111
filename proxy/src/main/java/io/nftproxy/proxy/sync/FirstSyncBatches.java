package io.nftproxy.proxy.sync;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.render.DesiredChain;
import io.nftproxy.proxy.render.Fragment;

/**
 * How a first sync is cut into transactions. nf_tables processes
 * every batch under one mutex shared by all network namespaces, so one batch of everything makes
 * every other nftables user of the node (the CNI plugin setting up the pods that start with the
 * node, firewalld, other tables) wait for all of it: seconds at tens of thousands of services.
 *
 * <p>The first transactions create the tables and the globals (shared chains, sets, maps), the
 * base chains' rules last, in a transaction of their own ({@link #globals}): until then nothing
 * reaches the rest, so it can be cut anywhere. Each later one adds whole services: every port of a service, with all of its elements and chains, goes
 * in one transaction, so a service becomes reachable only when everything it needs is there, and
 * nothing half-programmed is ever reachable. Services that own chains go first: a transaction that
 * adds rules makes the kernel validate every chain reachable from the base chains, which costs
 * least while the table is small; the services made of elements only come after, and adding
 * elements to sets and data maps validates nothing. A transaction holds at most about
 * {@code limit} objects (elements, rules, chains, sets) unless one service alone is larger. A
 * pure function of the rendered fragments.
 */
final class FirstSyncBatches {
    private FirstSyncBatches() {
    }

    /**
     * What a rule of the globals weighs against an element, a chain or a set when they are cut
     * into transactions. The kernel finds each set a rule looks up by walking the table's list of
     * sets by name; beside a table in use that list holds both generations, the one in use first,
     * and `perf` of a takeover at 100,000 services put 62% of a globals' transaction of ~2,000
     * rules in that walk (40–64 ms, others waiting as long; docs/benchmarks.md).
     */
    static final int RULE_WEIGHT = 4;

    /**
     * The contributors of {@code changes} (every family's) in batches of about {@code limit}: first
     * the globals alone, then services, each service's ports together.
     */
    static List<List<Contributor>> of(Map<IpFamily, Map<Contributor, Fragment>> changes, int limit) {
        List<List<Contributor>> out = new ArrayList<>();
        Queue q = queue(changes);
        while (q.hasNext()) {
            out.add(q.next(limit).ports());
        }
        return out;
    }

    /** One transaction's contributors, and what they weigh (objects, as {@link #weight} counts them). */
    record Batch(List<Contributor> ports, int weight) {
        /** Whether this is the globals' batch, the first ({@link Queue#next}): the tables and their shared parts. */
        boolean isGlobals() {
            return ports.size() == 1 && ports.get(0).isGlobals();
        }
    }

    /**
     * The contributors of {@code changes} (every family's) in the order they are sent, taken a
     * batch at a time: each batch as large as the sender asks for then ({@link KernelPace}).
     */
    static Queue queue(Map<IpFamily, Map<Contributor, Fragment>> changes) {
        // Per service (namespace/name): its ports, its weight, whether it owns chains.
        Map<String, Group> groups = new LinkedHashMap<>();
        boolean globals = false;
        for (Map<Contributor, Fragment> perFamily : changes.values()) {
            for (Map.Entry<Contributor, Fragment> e : perFamily.entrySet()) {
                Contributor who = e.getKey();
                if (who.isGlobals()) {
                    globals = true;
                    continue;
                }
                Group g = groups.computeIfAbsent(who.port().namespace() + "/" + who.port().name(), k -> new Group());
                if (!g.ports.contains(who)) {
                    g.ports.add(who);
                }
                Fragment f = e.getValue();
                if (f != null) {
                    g.weight += weight(f);
                    g.ownsChains |= !f.chains().isEmpty();
                }
            }
        }
        List<List<Group>> phases = new ArrayList<>();
        for (boolean chains : new boolean[] {true, false}) {
            phases.add(groups.values().stream().filter(g -> g.ownsChains == chains).toList());
        }
        return new Queue(globals, phases);
    }

    /**
     * What is left to send: the globals alone, then the services that own chains, then the
     * others (a batch never holds both kinds).
     */
    static final class Queue {
        private boolean globals;
        private final List<List<Group>> phases;
        private int phase;
        private int next;

        private Queue(boolean globals, List<List<Group>> phases) {
            this.globals = globals;
            this.phases = phases;
            skipEmptyPhases();
        }

        boolean hasNext() {
            return globals || phase < phases.size();
        }

        /** The next batch: whole services while they weigh at most {@code limit} together (at least one). */
        Batch next(int limit) {
            if (globals) {
                globals = false;
                return new Batch(List.of(Contributor.GLOBALS), 0);
            }
            List<Group> groups = phases.get(phase);
            List<Contributor> cur = new ArrayList<>();
            int w = 0;
            while (next < groups.size() && (cur.isEmpty() || w + groups.get(next).weight <= limit)) {
                Group g = groups.get(next++);
                cur.addAll(g.ports);
                w += g.weight;
            }
            if (next == groups.size()) {
                phase++;
                next = 0;
                skipEmptyPhases();
            }
            return new Batch(cur, w);
        }

        private void skipEmptyPhases() {
            while (phase < phases.size() && phases.get(phase).isEmpty()) {
                phase++;
            }
        }
    }

    /**
     * The globals' transaction {@code tx} (only additions, each after what it references, as
     * {@link Delta} writes them) cut into transactions of about {@code limit} objects in the same
     * order, a rule weighing {@link #RULE_WEIGHT} (an element list longer than that cut too),
     * without the base chains' rules; with
     * {@code baseRules}, those follow in one more transaction. Without them (a takeover: the switch
     * adds them) the whole write is unreachable. The globals of a table at 10,000 services are
     * 7,400 operations, and the kernel took 60 ms for them in one transaction.
     */
    static List<Transaction> globals(Transaction tx, int limit, boolean baseRules) {
        TransactionPacker out = new TransactionPacker(limit);
        Transaction base = new Transaction();
        for (Op op : tx.ops()) {
            if (op.object() instanceof Rule r && NftRenderer.isBaseChain(r.chain())) {
                base.op(op.verb(), op.object());
                continue;
            }
            List<Op> parts = List.of(op);
            if (op.object() instanceof Elements e && e.elements().size() > limit) {
                parts = new ArrayList<>();
                for (int i = 0; i < e.elements().size(); i += limit) {
                    parts.add(new Op(op.verb(), new Elements(e.family(), e.table(), e.set(),
                            e.elements().subList(i, Math.min(e.elements().size(), i + limit)))));
                }
            }
            for (Op part : parts) {
                out.add(weight(part), t -> t.op(part.verb(), part.object()));
            }
        }
        List<Transaction> all = new ArrayList<>(out.done());
        if (baseRules && !base.isEmpty()) {
            all.add(base);
        }
        return all;
    }

    /** What a transaction of the globals weighs, as {@link #globals} cuts them: a rule {@link #RULE_WEIGHT}, an element 1. */
    static int weight(Transaction tx) {
        int w = 0;
        for (Op op : tx.ops()) {
            w += weight(op);
        }
        return w;
    }

    /** What one operation of the globals weighs: its elements, a rule {@link #RULE_WEIGHT}, anything else 1. */
    private static int weight(Op op) {
        return op.object() instanceof Elements e ? e.elements().size() : op.object() instanceof Rule ? RULE_WEIGHT : 1;
    }

    /** What a fragment makes the kernel create: its elements, rules, chains and sets. */
    static int weight(Fragment f) {
        int w = f.sets().size() + f.chains().size();
        for (DesiredChain c : f.chains().values()) {
            w += c.rules().size();
        }
        for (List<?> els : f.elements().values()) {
            w += els.size();
        }
        return w;
    }

    private static final class Group {
        final List<Contributor> ports = new ArrayList<>();
        int weight;
        boolean ownsChains;
    }
}
