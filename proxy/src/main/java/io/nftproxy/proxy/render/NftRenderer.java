package io.nftproxy.proxy.render;


import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.plan.ServicePlan;

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
    // Global object names (the table is ours alone).
    /** ClusterIP, external and load-balancer IP ports of plain service ports (a set: never a verdict). */
    public static final String SERVICE_IPS = "service-ips";
    /** NodePorts of plain service ports. */
    public static final String SERVICE_NODEPORTS = "service-nodeports";
    /**
     * IP ports sent on by a verdict: of plain ports past MAX_PLAIN_PICK endpoints to their block's
     * tree, of ports with chains of their own to the first of them.
     */
    public static final String SERVICE_CHAINS = "service-chains";
    /** NodePorts sent on by a verdict, as {@link #SERVICE_CHAINS}. */
    public static final String NODEPORT_CHAINS = "nodeport-chains";
    /** The start of the names of the maps from IP ports' "frontend . index" to endpoint, one per count bucket ({@link #endpointMapBase}). */
    public static final String SERVICE_ENDPOINTS = "service-endpoints";
    public static final String NODEPORT_ENDPOINTS = "nodeport-endpoints";
    /** External and load-balancer IP ports of externalTrafficPolicy Local ports that are only data. */
    public static final String LOCAL_IPS = "local-ips";
    /** NodePorts of externalTrafficPolicy Local ports that are only data. */
    public static final String LOCAL_NODEPORTS = "local-nodeports";
    /** Their "frontend . index" to this node's endpoints. */
    public static final String LOCAL_ENDPOINTS = "local-endpoints";
    public static final String NODEPORT_LOCAL_ENDPOINTS = "nodeport-local-endpoints";
    /** Their frontends without an endpoint on this node: external traffic is dropped. */
    public static final String NO_LOCAL_ENDPOINT = "no-local-endpoint";
    public static final String NODEPORT_NO_LOCAL_ENDPOINT = "nodeport-no-local-endpoint";
    /** The shared chains that external traffic to those frontends goes through. */
    public static final String IP_EXTERNAL_LOCAL = "ip-external-local";
    public static final String NODEPORT_EXTERNAL_LOCAL = "nodeport-external-local";
    /**
     * Verdict maps, while some port is in them: the external frontends of policy Local whose
     * cluster endpoints are past MAX_PLAIN_PICK, to their block of the cluster tree, where those
     * chains send this node's pods and the node itself (the tree's root asks for no such block).
     */
    public static final String IP_EXTERNAL_LOCAL_BLOCKS = "ip-external-local-blocks";
    public static final String NODEPORT_EXTERNAL_LOCAL_BLOCKS = "nodeport-external-local-blocks";
    public static final String NO_ENDPOINT_REJECT = "no-endpoint-reject";
    public static final String NO_ENDPOINT_DROP = "no-endpoint-drop";
    public static final String NODEPORT_NO_ENDPOINT_REJECT = "nodeport-no-endpoint-reject";
    public static final String NODEPORT_NO_ENDPOINT_DROP = "nodeport-no-endpoint-drop";
    /**
     * Every frontend of the four sets above, by kind: the checks ask these first, so that a new
     * connection to a served frontend or to no service pays one lookup (the reject and drop sets
     * are asked only for a frontend that is in one of them).
     */
    public static final String UNSERVED_IPS = "unserved-ips";
    public static final String UNSERVED_NODEPORTS = "unserved-nodeports";
    /**
     * The chains hooked into the kernel's paths, the only names the kernel's traffic enters our
     * table by: a table built beside another under other names of its chains and sets (see
     * io.nftproxy.proxy.sync.Generation) shares these.
     */
    public static final Set<String> BASE_CHAINS = Set.of("nat-prerouting", "nat-output", "nat-postrouting",
            "filter-prerouting", "filter-input", "filter-forward", "filter-output", "filter-output-post-dnat");
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
    public static final String CLUSTER_IP_PORTS = "cluster-ip-ports";
    public static final String EXTERNAL_MASQ = "external-masquerade";
    public static final String NODEPORT_MASQ = "nodeport-masquerade";
    public static final String NODEPORT_ADDRS = "nodeport-addresses";
    public static final String CLUSTER_IPS = "cluster-ips";
    public static final String CLUSTER_CIDRS = "cluster-cidrs";
    public static final String SERVICE_CIDRS = "service-cidrs";
    public static final String HAIRPIN = "hairpin";
    public static final String AFFINITY = "affinity";
    /** Load-balancer IP ports with loadBalancerSourceRanges: new connections from elsewhere are dropped. */
    public static final String FIREWALL_IPS = "firewall-ips";
    /**
     * "load-balancer IP . protocol . port . source range": the sources those ports let in, in
     * FIREWALL_SHARDS sets by the IP's last byte ({@link #firewallShard}).
     */
    public static final String FIREWALL_ALLOW = "firewall-allow-";
    /** The constant map from a destination's last byte to its shard's chain. */
    public static final String FIREWALL_SHARD_MAP = "firewall-shards";
    /** The chain of one shard: {@code firewall-shard-K}. */
    public static final String FIREWALL_SHARD = "firewall-shard-";
    /**
     * Why shards: the kernel removes an element of an interval set of concatenations (pipapo) by
     * walking the set's rules from the first (nft_pipapo_remove): measured, 3 elements removed
     * from a set of 6,000 took 60 ms (52 ms a ranged service removed at 100k services of the
     * bench's mix), against ~0 to add them. 256 sets of a 256th each keep a removal short.
     */
    public static final int FIREWALL_SHARDS = 256;
    /** With --service-counters: the endpoints of service ports with chains of their own, each counting its connections. */
    public static final String CHAIN_ENDPOINTS = "chain-endpoints";
    /**
     * The sets whose elements carry a connection counter with --service-counters: each frontend
     * once, where it is dispatched (counting its connections) or refused, and the external chains'
     * drops. One element per frontend: small beside the endpoint maps.
     */
    public static final List<String> SERVICE_COUNTED_SETS = List.of(SERVICE_IPS, SERVICE_NODEPORTS,
            SERVICE_CHAINS, NODEPORT_CHAINS, LOCAL_IPS, LOCAL_NODEPORTS, CHAIN_ENDPOINTS, NO_ENDPOINT_REJECT,
            NO_ENDPOINT_DROP, NODEPORT_NO_ENDPOINT_REJECT, NODEPORT_NO_ENDPOINT_DROP, NO_LOCAL_ENDPOINT,
            NODEPORT_NO_LOCAL_ENDPOINT);
    /**
     * With --endpoint-counters, these count as well: the pick trees' endpoint maps ({@link
     * #endpointMapBase}), blocks past the roots' included, an element per frontend and endpoint.
     * (The endpoints of services with chains of their own count in {@link #CHAIN_ENDPOINTS}.)
     */
    public static List<String> endpointCountedSets() {
        return Stream.concat(PickTree.allEndpointMaps().stream().sorted(), PickTree.bigBlockMaps().stream()).toList();
    }

    private static final Set<String> SERVICE_COUNTED = Set.copyOf(SERVICE_COUNTED_SETS);

    /** Whether the elements of {@code set} carry a counter with these settings. */
    public static boolean counts(ProxyConfig config, String set) {
        return config.serviceCounters() && (SERVICE_COUNTED.contains(set)
                || config.endpointCounters() && PickTree.endpointsBaseOf(set) != null);
    }

    /** The sets whose elements carry a counter with these settings. */
    public static List<String> countedSets(ProxyConfig config) {
        return !config.serviceCounters() ? List.of() : !config.endpointCounters() ? SERVICE_COUNTED_SETS
                : Stream.concat(SERVICE_COUNTED_SETS.stream(), endpointCountedSets().stream()).toList();
    }

    /**
     * For one of the maps from "frontend . index" to endpoint, split by endpoint count ({@code
     * service-endpoints-9-16}): its kind's name ({@link #SERVICE_ENDPOINTS}, {@link
     * #NODEPORT_ENDPOINTS}, {@link #LOCAL_ENDPOINTS}, {@link #NODEPORT_LOCAL_ENDPOINTS}); null
     * for another set.
     */
    public static String endpointMapBase(String set) {
        return PickTree.endpointsBaseOf(set);
    }

    public static final String SERVICES = "services";
    public static final String MARK_FOR_MASQUERADE = "mark-for-masquerade";
    public static final String MASQUERADING = "masquerading";
    public static final String SERVICE_ENDPOINTS_CHECK = "service-endpoints-check";
    public static final String NODEPORT_ENDPOINTS_CHECK = "nodeport-endpoints-check";
    /** Where the checks send a frontend without endpoints: reject, or drop. */
    public static final String SERVICE_ENDPOINTS_UNSERVED = "service-endpoints-unserved";
    public static final String NODEPORT_ENDPOINTS_UNSERVED = "nodeport-endpoints-unserved";
    public static final String CLUSTER_IPS_CHECK = "cluster-ips-check";
    public static final String FIREWALL_CHECK = "firewall-check";
    static {
        if (Integer.bitCount(FIREWALL_SHARDS) != 1 || FIREWALL_SHARDS > 256) {
            throw new AssertionError("a shard is the last byte's low bits: FIREWALL_SHARDS must be a power of two up to 256");
        }
    }

    /** The shard of a load-balancer IP's source ranges: its last byte's low bits (all of them at 256 shards). */
    public static int firewallShard(InetAddress lbIP) {
        byte[] a = lbIP.getAddress();
        return a[a.length - 1] & (FIREWALL_SHARDS - 1);
    }

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
            timeouts.addAll(stickyTimeouts(svc));
        }
        return timeouts;
    }

    /**
     * Whether the globals declare a set only while some service fills it: the pick trees' blocks
     * and the sticky ports' ranges ({@link PickTree#isOnDemandSet}), the firewall shards' sets,
     * and the verdict maps to services with chains of their own. Asked of every set name of every fragment a sync sends or records.
     */
    public static boolean isOnDemandSet(String set) {
        return PickTree.isOnDemandSet(set) || set.startsWith(FIREWALL_ALLOW) || set.equals(SERVICE_CHAINS) || set.equals(NODEPORT_CHAINS)
                || set.equals(IP_EXTERNAL_LOCAL_BLOCKS) || set.equals(NODEPORT_EXTERNAL_LOCAL_BLOCKS);
    }

    /**
     * The global skeleton with the shared chains of these affinity timeouts (the distinct
     * {@link #stickyTimeouts} of the state's services; a sync keeps count of them as ports change)
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

    /**
     * The shared sticky chains a service port may use: its timeout's on the cluster trees, and
     * on the local trees too if its external traffic is of policy Local. A function of the port
     * alone (not of its endpoints), so that a sync can keep count as ports come and go.
     */
    public static List<StickyTimeout> stickyTimeouts(ServicePort svc) {
        long seconds = svc.affinitySeconds();
        if (seconds == 0) {
            return List.of();
        }
        StickyTimeout cluster = new StickyTimeout(seconds, false);
        return svc.hasExternal() && svc.externalPolicyLocal()
                ? List.of(cluster, new StickyTimeout(seconds, true)) : List.of(cluster);
    }

    /** One service port's contribution to one family's table (empty if it has no IP of that family). */
    public Fragment service(IpFamily f, ServicePort svc, List<Endpoint> endpoints, NodeInfo node) {
        return service(f, svc, endpoints, node, EndpointSlots.NONE);
    }

    /**
     * One service port's contribution, its endpoints keeping the indices they held in
     * {@code previous} (the slots of the port's last fragment in this family).
     */
    public Fragment service(IpFamily f, ServicePort svc, List<Endpoint> endpoints, NodeInfo node, EndpointSlots previous) {
        if (!svc.inFamily(f)) {
            return Fragment.EMPTY;
        }
        FragmentBuilder b = new FragmentBuilder(config, f, node);
        if (elementComments) {
            b.commentWith(svc.id());
        }
        ServicePlan planned = ServicePlan.of(svc, endpoints, node, config, f);
        b.slots = previous.next(planned.clusterEndpoints(), planned.localEndpoints(),
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
}
