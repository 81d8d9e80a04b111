package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.NftRenderer.*;
import static io.nftproxy.proxy.render.TableNames.*;

import java.net.InetAddress;
import java.util.List;
import java.util.Map;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.plan.MaglevTable;
import io.nftproxy.proxy.plan.ServicePlan;
import io.nftproxy.proxy.plan.Target;

/**
 * A service port that needs no chain of its own (the common case): only elements of the shared
 * sets and maps. Its frontends are members of the plain ports' set (or, external ones of policy
 * Local, of the Local set), and of the bit sets that lead the shared tree to the pick-k chain of
 * its endpoint count ({@link PickTree}); that chain draws an index in [0, k) and looks
 * "destination . index" up to find the endpoint. Changing it never changes a rule or a verdict,
 * so the kernel validates nothing when it commits. Services
 * that need more go to {@link ServiceChains}.
 */
final class ServiceData extends RenderPart {
    ServiceData(FragmentBuilder b) {
        super(b);
    }

    /** The k elements "front key . index" to "address . port" that pick-k chooses among. */
    void endpoints(String map, Bytes front, List<Endpoint> eps) {
        for (int i = 0; i < eps.size(); i++) {
            Endpoint e = eps.get(i);
            b.element(map, SetElement.of(Bytes.concat(front, Bytes.host32(i)),
                    Data.value(MapKeys.endpoint(e.ip(), e.port()))));
        }
    }

    /** The plan's frontends as elements of the shared maps, or of the no-endpoint sets. */
    void render(ServicePlan plan) {
        int proto = plan.protocol().number();
        int port = plan.port();
        long sticky = plan.affinitySeconds();
        boolean internalLocal = plan.internal() == Target.LOCAL;
        List<Endpoint> internal = internalLocal ? plan.localEndpoints() : plan.clusterEndpoints();
        AffinityIds internalIds = internalLocal ? b.slots.localIds() : b.slots.clusterIds();
        // The cluster's endpoints hashed into one Maglev table, the same for every frontend.
        MaglevTable table = plan.algorithm().hashed() ? MaglevTable.of(plan.clusterEndpoints(),
                MaglevTable.sizeFor(plan.clusterEndpoints().size())) : null;
        for (InetAddress ip : plan.clusterIPs()) {
            Bytes k = b.key(ip, proto, port);
            if (plan.internal() == Target.CLUSTER && table != null) {
                hashed(PickTree.Kind.IP, k, plan, table, sticky);
            } else if (plan.internal() == Target.CLUSTER || internalLocal) {
                frontend(PickTree.Kind.IP, k, internal, internalIds, sticky);
            } else {
                b.noEndpoints(plan.internal(), k, null);
            }
        }
        // External traffic: the Cluster policy picks among every endpoint; Local goes through
        // the shared chain that short-circuits pods and the node to them and picks among this
        // node's endpoints for the rest (see GlobalChains#externalLocal).
        List<Endpoint> cluster = plan.clusterEndpoints();
        for (InetAddress ip : plan.externalFrontends()) {
            Bytes k = b.key(ip, proto, port);
            switch (plan.external()) {
                case CLUSTER -> {
                    if (table != null) {
                        hashed(PickTree.Kind.IP, k, plan, table, sticky);
                    } else {
                        frontend(PickTree.Kind.IP, k, cluster, b.slots.clusterIds(), sticky);
                        externalToBlock(PickTree.Kind.IP, k, cluster.size(), false);
                    }
                    b.element(EXTERNAL_MASQ, SetElement.of(k));
                }
                case EXTERNAL_LOCAL -> externalLocal(PickTree.Kind.IP, k, plan, sticky);
                default -> b.noEndpoints(plan.external(), k, null);
            }
        }
        if (plan.nodePort() != 0) {
            Bytes k = b.key(proto, plan.nodePort());
            switch (plan.external()) {
                case CLUSTER -> {
                    if (table != null) {
                        hashed(PickTree.Kind.NODEPORT, k, plan, table, sticky);
                    } else {
                        frontend(PickTree.Kind.NODEPORT, k, cluster, b.slots.clusterIds(), sticky);
                        externalToBlock(PickTree.Kind.NODEPORT, k, cluster.size(), false);
                    }
                    b.element(NODEPORT_MASQ, SetElement.of(k));
                }
                case EXTERNAL_LOCAL -> externalLocal(PickTree.Kind.NODEPORT, k, plan, sticky);
                default -> b.noEndpoints(plan.external(), null, k);
            }
        }
    }

    /**
     * A frontend whose clients are hashed into the port's Maglev table ({@link MaglevPick}),
     * with ClientIP affinity ({@code stickySeconds} > 0) checked first and remembered after, as
     * for a frontend of the trees: its sticky elements are the same.
     */
    private void hashed(PickTree.Kind kind, Bytes key, ServicePlan plan, MaglevTable table, long stickySeconds) {
        MaglevPick.frontend(b, kind, key, plan.algorithm(), table);
        if (stickySeconds != 0) {
            sticky(kind, key, b.slots.clusterIds(), stickySeconds);
        }
    }

    /**
     * An external frontend of policy Local: a member of its kind's Local set, counted and indexed
     * in both trees (the cluster endpoints for pods and the node, this node's for the rest), or
     * in the set that drops external traffic when this node has none. With affinity, sticky in
     * both trees: a client is remembered in the tree it picked through.
     */
    private void externalLocal(PickTree.Kind kind, Bytes key, ServicePlan plan, long stickySeconds) {
        b.dispatched(kind.ip ? LOCAL_IPS : LOCAL_NODEPORTS, SetElement.of(key));
        externalToBlock(kind, key, plan.clusterEndpoints().size(), true);
        inTree(kind, key, plan.clusterEndpoints(), b.slots.clusterIds(), stickySeconds);
        if (plan.localEndpoints().isEmpty()) {
            b.element(kind.ip ? NO_LOCAL_ENDPOINT : NODEPORT_NO_LOCAL_ENDPOINT, SetElement.of(key));
        } else {
            inTree(kind.local(), key, plan.localEndpoints(), b.slots.localIds(), stickySeconds);
        }
    }

    /**
     * An external frontend past MAX_PLAIN_PICK cluster endpoints: its way to the cluster count's
     * block in both verdict maps, whatever its policy. services' ({@code service-chains}) serves
     * policy Cluster, and the external chain's ({@code ip-external-local-blocks}) this node's pods
     * and the node itself under policy Local; {@code local-ips}, asked before the first, decides
     * which. With both always there, a connection whose first packet crosses a commit that flips
     * the policy, reading {@code local-ips} before the flip and a verdict map after it, finds its
     * block either way (rather than the tree's root, which asks for no such block). {@code local}:
     * of policy Local (its services' element then only for such a crossing).
     */
    private void externalToBlock(PickTree.Kind kind, Bytes key, int cluster, boolean local) {
        if (cluster <= MAX_PLAIN_PICK) {
            return;
        }
        Verdict toBlock = kind.toBlock(cluster);
        b.element(kind.ip ? IP_EXTERNAL_LOCAL_BLOCKS : NODEPORT_EXTERNAL_LOCAL_BLOCKS, SetElement.of(key, toBlock));
        if (local) {
            // Never asked while the frontend is in local-ips, which services asks first.
            b.element(kind.ip ? SERVICE_CHAINS : NODEPORT_CHAINS, SetElement.of(key, toBlock));
        }
    }

    /**
     * One frontend that picks among {@code eps}: a member of its kind's set (past MAX_PLAIN_PICK,
     * of its verdict map, to its block's tree), its count in the bit sets, its endpoints by index, and with affinity ({@code stickySeconds} > 0) a member of the
     * sticky sets, which the tree's root sends on to {@link StickyPick}'s chains.
     */
    private void frontend(PickTree.Kind kind, Bytes key, List<Endpoint> eps, AffinityIds ids, long stickySeconds) {
        if (eps.size() > MAX_PLAIN_PICK) {
            // Past the blocks the root asks for: services sends it to its block's tree (PickTree).
            b.dispatched(kind.ip ? SERVICE_CHAINS : NODEPORT_CHAINS,
                    SetElement.of(key, kind.toBlock(eps.size())));
        } else {
            b.dispatched(kind.ip ? SERVICE_IPS : SERVICE_NODEPORTS, SetElement.of(key));
        }
        inTree(kind, key, eps, ids, stickySeconds);
    }

    /**
     * A frontend in one tree: its count in the tree's bit sets, its endpoints by index in the
     * tree's map for its count, and with affinity ({@code stickySeconds} > 0) its sticky elements.
     */
    private void inTree(PickTree.Kind kind, Bytes key, List<Endpoint> eps, AffinityIds ids, long stickySeconds) {
        PickTree.count(b, kind, key, eps.size());
        endpoints(kind.endpoints(eps.size()), key, eps);
        if (stickySeconds != 0) {
            sticky(kind, key, ids, stickySeconds);
        }
    }

    /**
     * A sticky frontend: a member of its kind's sticky sets (any timeout's, its timeout's, its
     * range of numbers'), and per endpoint "frontend . number" to the endpoint, "frontend .
     * endpoint" among the pairs and in the bit sets of its number ({@link StickyPick}).
     */
    private void sticky(PickTree.Kind kind, Bytes key, AffinityIds ids, long stickySeconds) {
        int range = ids.range();
        b.element(StickyPick.allMembers(kind), SetElement.of(key));
        b.element(StickyPick.members(kind, stickySeconds), SetElement.of(key));
        b.element(StickyPick.rangeMembers(kind, range), SetElement.of(key));
        String map = StickyPick.endpoints(kind, range);
        for (Map.Entry<Integer, Endpoint> held : ids.held().entrySet()) {
            int id = held.getKey();
            Endpoint e = held.getValue();
            Bytes endpoint = MapKeys.endpoint(e.ip(), e.port());
            b.element(map, SetElement.of(Bytes.concat(key, Bytes.host32(id)), Data.value(endpoint)));
            Bytes pair = Bytes.concat(key, endpoint);
            b.element(StickyPick.pairs(kind), SetElement.of(pair));
            for (int bit = 0; 1 << bit <= id; bit++) {
                if ((id & 1 << bit) != 0) {
                    b.element(StickyPick.idBit(kind, bit), SetElement.of(pair));
                }
            }
        }
    }

    /**
     * loadBalancerSourceRanges, for every service whether it has chains or not: each
     * load-balancer IP port in the set whose new connections are dropped, and per allowed range
     * one element "IP . protocol . port . first-last" of the set that lets them through first.
     * The ranges are merged beforehand: the kernel refuses a range that overlaps another of the
     * same set, and nested CIDRs (or a node's address inside a range) would.
     */
    void firewall(ServicePlan plan) {
        if (plan.firewall().isEmpty()) {
            return;
        }
        List<Cidr.Range> ranges = Cidr.merge(plan.firewall());
        for (InetAddress ip : plan.loadBalancerIPs()) {
            Bytes k = b.key(ip, plan.protocol().number(), plan.port());
            b.element(FIREWALL_IPS, SetElement.of(k));
            for (Cidr.Range r : ranges) {
                b.element(firewallAllow(TableNames.firewallShard(ip)), new SetElement(Bytes.concat(k, Bytes.ip(r.start())),
                        Bytes.concat(k, Bytes.ip(r.last())), null, 0, 0, 0));
            }
        }
    }
}
