package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.TableNames.*;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiPredicate;
import java.util.function.Supplier;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.plan.ServicePlan;
import io.nftproxy.proxy.plan.StickyTimeout;

/**
 * Renders the proxy state into the nf_tables objects of one table per family. A pure function.
 *
 * <p>The layout keeps the kernel's commit work per service constant (see docs/ruleset.md): all
 * services share a handful of global maps, each bound by one rule. A plain service port is only
 * elements of data maps (its endpoint count, its endpoints), which the kernel commits without
 * validating any chain, with or without affinity, the external Local policy or
 * loadBalancerSourceRanges (elements of an interval set), past 1,024 endpoints sent to a block of
 * the shared trees by a verdict element; sticky or Local ports past that get chains of their own. Masquerade decisions that kube-proxy makes
 * per service are global set lookups here.
 */
public final class NftRenderer {
    /** Endpoint counts of a kind's shared tree (a power of two: see PickTree). */
    public static final int MAX_SHARED_PICK = 128;
    /**
     * Endpoint counts the root of a shared tree sends on: above MAX_SHARED_PICK in blocks declared
     * while in use (PickTree), and their sticky ports' chains per range of endpoint numbers
     * (StickyPick). Each such block adds a lookup to every plain port's new connection, so they
     * stop at eight; larger counts are sent to their block's tree by {@code services}' verdict
     * maps (up to {@link #MAX_TREE_PICK}), or have chains of their own (with affinity, or external
     * traffic of policy Local).
     */
    public static final int MAX_PLAIN_PICK = 8 * MAX_SHARED_PICK;
    /**
     * The largest endpoint count the shared trees pick among: a plain port past {@link
     * #MAX_PLAIN_PICK} is an element of {@link #SERVICE_CHAINS} (or {@link #NODEPORT_CHAINS}) that
     * goes to its block's tree, so that a new connection to it reads seven bit sets, whatever its
     * count, and an endpoint added or removed within a block of 128 is elements without verdicts.
     * A bound only to keep the names of the blocks' maps finite (the counters read them by name):
     * beyond it, chains of their own.
     */
    public static final int MAX_TREE_PICK = 512 * MAX_SHARED_PICK;
    /** kube-proxy's default affinity timeout; every entry is written with its own service's. */
    static final long AFFINITY_DEFAULT_MS = 10_800_000L;
    /**
     * The most entries a set the kernel writes (affinity, hairpin) may hold. Without one given the
     * kernel caps such a set at 65,535, and a refused update ends its rule: the one affinity set
     * of a table (every sticky service's clients, each entry living for its timeout, three hours
     * by default) reached that in a large cluster. A size costs nothing up front (measured:
     * twenty such sets of 1,048,576 left the kernel's vmalloc use as it was); entries take kernel
     * memory only as traffic adds them, about 100 bytes each.
     */
    static final int KERNEL_WRITTEN_SET_SIZE = 1 << 20;
    /** How long the kernel keeps a source in the {@link #HAIRPIN} set after its last new service connection. */
    static final long HAIRPIN_TIMEOUT_MS = 1_000L;

    private final ProxyConfig config;
    private final boolean elementComments;

    public NftRenderer(ProxyConfig config) {
        this(config, true);
    }

    /**
     * @param elementComments whether service ports' elements name them in a comment (kube-proxy's
     *                        do; {@code bench --no-element-comments} measures what they cost)
     */
    public NftRenderer(ProxyConfig config, boolean elementComments) {
        this.config = config;
        this.elementComments = elementComments;
    }

    /** The settings it renders with. */
    public ProxyConfig config() {
        return config;
    }

    /**
     * The global skeleton of one family's table: shared chains, sets, and CIDR elements, with
     * what the state's services need of the parts declared on demand, rendering every service to
     * learn it (a sync counts it as services change instead, and calls the method below): for
     * tests and tools that want the globals of a whole state.
     */
    public Fragment globals(IpFamily f, ProxyState state) {
        SortedSet<String> demanded = new TreeSet<>();
        for (ServicePort svc : state.services().values()) {
            demanded.addAll(service(f, svc, state.endpointsOf(svc.id()), state.node()).demands());
        }
        return globals(f, state, stickyTimeouts(state), demanded);
    }

    private static SortedSet<StickyTimeout> stickyTimeouts(ProxyState state) {
        SortedSet<StickyTimeout> timeouts = new TreeSet<>();
        for (ServicePort svc : state.services().values()) {
            timeouts.addAll(StickyTimeout.usedBy(svc));
        }
        return timeouts;
    }

    /**
     * Whether the globals declare a set only while some service fills it: the pick trees' blocks
     * and the sticky ports' ranges ({@link PickTree#isOnDemandSet}), the firewall shards' sets,
     * the verdict maps to services with chains of their own, and the hashed picks' slots maps
     * ({@link MaglevPick}). Asked of every set name of every fragment a sync sends or records.
     */
    public static boolean isOnDemandSet(String set) {
        return PickTree.isOnDemandSet(set) || set.startsWith(FIREWALL_ALLOW) || set.equals(SERVICE_CHAINS) || set.equals(NODEPORT_CHAINS)
                || set.equals(IP_EXTERNAL_LOCAL_BLOCKS) || set.equals(NODEPORT_EXTERNAL_LOCAL_BLOCKS) || MaglevPick.isSlotsMap(set);
    }

    /**
     * The global skeleton with the shared chains of these affinity timeouts (the distinct
     * {@link StickyTimeout#usedBy} of the state's services; a sync keeps count of them as ports change)
     * and the on-demand sets the services fill ({@link Fragment#demands}).
     */
    public Fragment globals(IpFamily f, ProxyState state, SortedSet<StickyTimeout> stickyTimeouts, Set<String> demanded) {
        FragmentBuilder b = new FragmentBuilder(config, f, state.node());
        new GlobalChains(b, config.serviceCIDRs(f, state.serviceCIDRs()),
                picks(f, state.node(), stickyTimeouts, demanded), demanded).declare();
        return b.fragment();
    }

    private record PickKey(IpFamily family, SortedSet<StickyTimeout> stickyTimeouts, SortedSet<String> demanded) {
    }

    /**
     * The shared picking chains of a family and set of timeouts, rendered once: some 1,500 rules
     * a timeout, the same every time (in a profile of the partial-sync property tests, rendering
     * them again was the largest part of a full sync's render). A handful of keys at most;
     * forgotten wholesale past that.
     */
    private final Map<PickKey, Fragment> picks = new ConcurrentHashMap<>();

    private Fragment picks(IpFamily f, NodeInfo node, SortedSet<StickyTimeout> stickyTimeouts, Set<String> demanded) {
        PickKey key = new PickKey(f, new TreeSet<>(stickyTimeouts), new TreeSet<>(demanded));
        Fragment had = picks.get(key);
        if (had != null) {
            return had;
        }
        if (picks.size() > 8) {
            picks.clear();
        }
        Fragment made = GlobalChains.picks(new FragmentBuilder(config, f, node), key.stickyTimeouts(), key.demanded());
        picks.put(key, made);
        return made;
    }

    /** One service port's contribution to one family's table (empty if it has no IP of that family). */
    public Fragment service(IpFamily f, ServicePort svc, List<Endpoint> endpoints, NodeInfo node) {
        return service(f, svc, endpoints, node, null);
    }

    /**
     * One service port's contribution, its endpoints keeping the indices they held in
     * {@code previous}, the port's last fragment in this family (null: none).
     */
    public Fragment service(IpFamily f, ServicePort svc, List<Endpoint> endpoints, NodeInfo node, Fragment previous) {
        if (!svc.inFamily(f)) {
            return Fragment.EMPTY;
        }
        EndpointSlots held = previous == null ? EndpointSlots.NONE : previous.slots();
        FragmentBuilder b = new FragmentBuilder(config, f, node);
        if (elementComments) {
            b.commentWith(svc.id());
        }
        ServicePlan planned = ServicePlan.of(svc, endpoints, node, config, f);
        b.slots = held.next(planned.clusterEndpoints(), planned.localEndpoints(),
                planned.sticky() && !ServiceChains.needed(planned));
        ServicePlan plan = planned.withEndpoints(b.slots.cluster(), b.slots.local());
        int proto = plan.protocol().number();
        for (InetAddress ip : plan.clusterIPs()) {
            b.element(CLUSTER_IPS, SetElement.of(Bytes.ip(ip)));
            b.element(CLUSTER_IP_PORTS, SetElement.of(b.key(ip, proto, plan.port())));
        }
        ServiceData data = new ServiceData(b);
        if (ServiceChains.needed(plan)) {
            new ServiceChains(b).render(plan);
        } else {
            data.render(plan);
        }
        data.firewall(plan);
        return b.fragment();
    }

    /**
     * Whether a chain is one the kernel's traffic enters our table by (hooked into its paths):
     * a table built beside another under other names shares these (io.nftproxy.proxy.sync.Generation).
     */
    public static boolean isBaseChain(String chain) {
        return TableNames.BASE_CHAINS.contains(chain);
    }

    /** Whether a chain is one of {@code nftproxy trace}'s marking chains, added for a while: neither ours nor drift. */
    public static boolean isTraceChain(String chain) {
        return Names.isTraceChain(chain);
    }

    /** How long what a change keeps for the packets crossing its commit stays ({@link Transitions#GRACE}). */
    public static final Duration CROSSING_GRACE = Transitions.GRACE;

    /**
     * What the commits of one sync must leave in place for the packets that cross them ({@link
     * Transitions}): {@code newFragments}, the sync's new fragments of every port, read only when
     * a port lets a frontend go (it may be another port's now); {@code kept}, by set and key, the
     * elements earlier changes keep still (null: none, which spares the look at every index a
     * packet could draw).
     */
    public static Crossings crossings(Supplier<List<Fragment>> newFragments, BiPredicate<String, Bytes> kept) {
        return new Crossings(Transitions.elsewhere(newFragments), kept == null ? Transitions.NOTHING_KEPT : kept::test);
    }

    /** What one sync's changes keep for the packets crossing their commits (see {@link #crossings}). */
    public static final class Crossings {
        private final Transitions.Elsewhere elsewhere;
        private final Transitions.Kept kept;

        private Crossings(Transitions.Elsewhere elsewhere, Transitions.Kept kept) {
            this.elsewhere = elsewhere;
            this.kept = kept;
        }

        /**
         * The elements a port's change from {@code old} to {@code neu} (null: it goes) keeps, as a
         * fragment of elements only ({@link Fragment#EMPTY}: none); {@code declared}, the
         * on-demand sets the old generation declares; {@code structureStays}, whether every
         * on-demand set {@code old} picks through stays declared after the commit.
         */
        public Fragment between(Fragment old, Fragment neu, Set<String> declared, boolean structureStays) {
            return Transitions.between(old, neu, declared, elsewhere, kept, structureStays);
        }

        /** The elements of both (a key in both: {@code a}'s). */
        public static Fragment merged(Fragment a, Fragment b) {
            return Transitions.merged(a, b);
        }
    }
}
