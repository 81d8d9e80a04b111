package io.nftproxy.proxy.render;

import java.net.InetAddress;
import java.util.List;
import java.util.Set;

/**
 * The names of the objects of our tables that every service shares (sets, maps, chains), the
 * base chains the kernel's traffic enters by, and how a shared name is read back (an endpoint
 * map's kind, a load-balancer IP's firewall shard). The trees' names are their kinds' ({@link
 * PickTree.Kind}), the sticky chains' {@link StickyPick}'s, a service port's own chains {@link
 * Names}'. Names an operator reads are in docs/ruleset.md: a rename here is a rename there, and
 * in what reads them back (the counters, the trace).
 */
public final class TableNames {
    private TableNames() {
    }

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
     * The sets and maps keyed by an IP frontend ("address . protocol . port"), an element per
     * frontend carrying its service port's comment (Names#elementComment): where a frontend is
     * sent on, or refused. What names a packet's service from the kernel reads these.
     */
    public static final List<String> IP_FRONTEND_SETS = List.of(SERVICE_IPS, SERVICE_CHAINS, LOCAL_IPS, NO_ENDPOINT_REJECT,
            NO_ENDPOINT_DROP);
    /** The same of NodePorts ("protocol . port"). */
    public static final List<String> NODEPORT_FRONTEND_SETS = List.of(SERVICE_NODEPORTS, NODEPORT_CHAINS, LOCAL_NODEPORTS,
            NODEPORT_NO_ENDPOINT_REJECT, NODEPORT_NO_ENDPOINT_DROP);
    /**
     * The chains hooked into the kernel's paths, the only names the kernel's traffic enters our
     * table by: a table built beside another under other names of its chains and sets (see
     * io.nftproxy.proxy.sync.Generation) shares these.
     */
    public static final Set<String> BASE_CHAINS = Set.of("nat-prerouting", "nat-output", "nat-postrouting",
            "filter-prerouting", "filter-input", "filter-forward", "filter-output", "filter-output-post-dnat");
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
    /** The chain the filter chains send new DNATed connections to, which remembers sticky ports' clients. */
    public static final String STICKY_REMEMBER = "sticky-remember";

    /**
     * Every name above that is a whole name (not a prefix or an endpoint maps' base), and the
     * base chains: the names {@link ObjectName#parse} reads as {@link ObjectName.Scheme#FIXED}.
     */
    static final Set<String> FIXED = fixed();

    private static Set<String> fixed() {
        Set<String> out = new java.util.HashSet<>(BASE_CHAINS);
        out.addAll(List.of(SERVICE_IPS, SERVICE_NODEPORTS, SERVICE_CHAINS, NODEPORT_CHAINS, LOCAL_IPS, LOCAL_NODEPORTS,
                NO_LOCAL_ENDPOINT, NODEPORT_NO_LOCAL_ENDPOINT, IP_EXTERNAL_LOCAL, NODEPORT_EXTERNAL_LOCAL,
                IP_EXTERNAL_LOCAL_BLOCKS, NODEPORT_EXTERNAL_LOCAL_BLOCKS, NO_ENDPOINT_REJECT, NO_ENDPOINT_DROP,
                NODEPORT_NO_ENDPOINT_REJECT, NODEPORT_NO_ENDPOINT_DROP, UNSERVED_IPS, UNSERVED_NODEPORTS, CLUSTER_IP_PORTS,
                EXTERNAL_MASQ, NODEPORT_MASQ, NODEPORT_ADDRS, CLUSTER_IPS, CLUSTER_CIDRS, SERVICE_CIDRS, HAIRPIN, AFFINITY,
                FIREWALL_IPS, FIREWALL_SHARD_MAP, CHAIN_ENDPOINTS, SERVICES, MARK_FOR_MASQUERADE, MASQUERADING,
                SERVICE_ENDPOINTS_CHECK, NODEPORT_ENDPOINTS_CHECK, SERVICE_ENDPOINTS_UNSERVED, NODEPORT_ENDPOINTS_UNSERVED,
                CLUSTER_IPS_CHECK, FIREWALL_CHECK, STICKY_REMEMBER));
        return Set.copyOf(out);
    }

    static {
        if (Integer.bitCount(FIREWALL_SHARDS) != 1 || FIREWALL_SHARDS > 256) {
            throw new AssertionError("a shard is the last byte's low bits: FIREWALL_SHARDS must be a power of two up to 256");
        }
    }

    /** The set of the source ranges of the load-balancer IPs of shard {@code shard} ({@link #firewallShard}). */
    public static String firewallAllow(int shard) {
        return ObjectName.format(ObjectName.Scheme.FIREWALL_ALLOW, null, null, null, shard);
    }

    /** The chain of shard {@code shard}. */
    static String firewallShardChain(int shard) {
        return ObjectName.format(ObjectName.Scheme.FIREWALL_SHARD, null, null, null, shard);
    }

    /** The shard of a load-balancer IP's source ranges: its last byte's low bits (all of them at 256 shards). */
    public static int firewallShard(InetAddress lbIP) {
        byte[] a = lbIP.getAddress();
        return a[a.length - 1] & (FIREWALL_SHARDS - 1);
    }

}
