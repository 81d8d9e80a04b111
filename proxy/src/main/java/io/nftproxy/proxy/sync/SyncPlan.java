package io.nftproxy.proxy.sync;

import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;

import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.plan.TableFamilies;
import io.nftproxy.proxy.plan.StickyTimeout;

/**
 * What one sync does, decided before anything is rendered: its kind, the service ports it
 * renders, which shared inputs changed, how many service ports of the state use each set of
 * shared sticky chains (the globals hold the chains of each) and have an address of each family,
 * and the families whose tables the state needs. A pure function of what the {@link Syncer}
 * holds and of the state it is asked to sync ({@link #of}); the counts are kept as ports change,
 * not counted over every service on every sync.
 */
record SyncPlan(Kind kind, Set<ServicePortName> ports, boolean nodeChanged, boolean networkChanged,
                TreeMap<StickyTimeout, Integer> stickyTimeouts, boolean stickyTimeoutsChanged,
                EnumMap<IpFamily, Integer> familyPorts, Set<IpFamily> families) {

    /** The kinds of sync: what each re-sends. */
    enum Kind {
        /**
         * Nothing committed (the first sync, or a rebuild after drift or a failed sync): our tables
         * are written whole, fragments reused where their inputs did not change; in small
         * transactions (the Syncer's batches, or a takeover beside the running table), or, when
         * those cannot be used, replaced in one (add, delete, add).
         */
        REPLACE,
        /**
         * A full sync over the tables we hold: what changed sent as a partial sync would, then
         * everything we hold re-sent in small transactions that change nothing the kernel already
         * has ({@link ResendSlices}): drift nobody reported is repaired without holding every other
         * nftables user of the node for one large batch.
         */
        REASSERT,
        /** The changed service ports only, and the globals when the node or the service network changed. */
        PARTIAL
    }

    /**
     * What the Syncer holds when it is asked for a sync.
     *
     * @param lastState      the state last synced (null before the first)
     * @param families       the families whose tables are committed (none: nothing is)
     * @param heldPorts      the service ports with a fragment in some committed table, asked only
     *                       by a full sync (a partial one would walk every fragment for nothing)
     * @param stickyTimeouts the last sync's counts of ports per set of shared sticky chains
     * @param familyPorts    the last sync's counts of ports per family
     */
    record Held(ProxyState lastState, Set<IpFamily> families, Supplier<Set<ServicePortName>> heldPorts,
                Map<StickyTimeout, Integer> stickyTimeouts, Map<IpFamily, Integer> familyPorts) {
    }

    boolean full() {
        return kind != Kind.PARTIAL;
    }

    /** The globals (shared chains, interval sets) are rendered again. */
    boolean globals() {
        return full() || nodeChanged || networkChanged || stickyTimeoutsChanged;
    }

    /**
     * The plan of a sync of {@code state}: {@code changed} names the service ports whose service
     * or endpoints changed since the last sync; null asks for a full sync.
     */
    static SyncPlan of(Held held, ProxyState state, Set<ServicePortName> changed, ProxyConfig config) {
        ProxyState last = held.lastState();
        Kind kind = held.families().isEmpty() ? Kind.REPLACE : changed == null ? Kind.REASSERT : Kind.PARTIAL;
        boolean partial = kind == Kind.PARTIAL && last != null;
        boolean nodeChanged = last == null || !last.node().equals(state.node());
        // The service network changes only the table's globals (an interval set's elements).
        boolean networkChanged = last == null || !last.serviceCIDRs().equals(state.serviceCIDRs());
        Set<ServicePortName> ports = new TreeSet<>();
        if (kind == Kind.PARTIAL) {
            ports.addAll(changed);
            if (nodeChanged) {
                // Local endpoints and zone hints depend on the node: every service is rendered again.
                ports.addAll(state.services().keySet());
            }
        } else {
            ports.addAll(state.services().keySet());
            ports.addAll(held.heldPorts().get()); // what we hold and the state no longer has goes
        }
        TreeMap<StickyTimeout, Integer> timeouts = new TreeMap<>();
        EnumMap<IpFamily, Integer> inFamily = new EnumMap<>(IpFamily.class);
        if (partial) {
            timeouts.putAll(held.stickyTimeouts());
            inFamily.putAll(held.familyPorts());
            for (ServicePortName id : changed) {
                ServicePort was = last.services().get(id);
                ServicePort is = state.services().get(id);
                countStickyTimeouts(timeouts, was, -1);
                countStickyTimeouts(timeouts, is, +1);
                TableFamilies.count(inFamily, was, -1);
                TableFamilies.count(inFamily, is, +1);
            }
        } else {
            for (ServicePort svc : state.services().values()) {
                countStickyTimeouts(timeouts, svc, +1);
                TableFamilies.count(inFamily, svc, +1);
            }
        }
        Set<IpFamily> families = TableFamilies.of(config, state, inFamily);
        if (kind == Kind.PARTIAL && !held.families().containsAll(families)) {
            // A family's table comes with the first thing of that family: written whole.
            ports.addAll(state.services().keySet());
        }
        return new SyncPlan(kind, ports, nodeChanged, networkChanged, timeouts,
                !timeouts.keySet().equals(held.stickyTimeouts().keySet()), inFamily, families);
    }

    /** Counts the shared sticky chains {@code svc} uses (null: none) in or out of {@code timeouts}. */
    private static void countStickyTimeouts(TreeMap<StickyTimeout, Integer> timeouts, ServicePort svc, int delta) {
        if (svc != null) {
            for (StickyTimeout t : StickyTimeout.usedBy(svc)) {
                timeouts.merge(t, delta, (a, b) -> a + b == 0 ? null : a + b);
            }
        }
    }
}
