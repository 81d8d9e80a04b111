package io.nftproxy.proxy.plan;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.LbAlgorithm;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.topology.EndpointSelection;
import io.nftproxy.proxy.topology.EndpointSelector;

/**
 * What one service port does with its traffic in one IP family, decided once for every backend:
 * the nftables renderer and the iptables reference renderer translate it into their layouts and
 * decide nothing of their own. A pure function of the service port, its endpoints, the node and
 * the configuration ({@link #of}), as kube-proxy's proxiers decide it from CategorizeEndpoints
 * (usesClusterPolicyChain, hasInternalEndpoints, internalTrafficFilterTarget, ...). The Service
 * itself is not handed on: what a renderer needs of it is here.
 *
 * @param id                  the service port (its protocol too)
 * @param port                the port its ClusterIPs, external and load-balancer IPs are reached on
 * @param nodePort            its NodePort, 0 without
 * @param affinitySeconds     how long a client is sent back to the endpoint it reached (ClientIP
 *                            session affinity), 0 without
 * @param clusterEndpoints    the endpoints Cluster-policy traffic picks among; empty when the
 *                            port sends no traffic there (no chain for them is needed)
 * @param localEndpoints      the endpoints Local-policy traffic picks among; empty likewise
 * @param internal            for the ClusterIPs: CLUSTER, LOCAL, REJECT or DROP
 * @param external            for the NodePort, external and load-balancer IPs: CLUSTER,
 *                            EXTERNAL_LOCAL, REJECT, DROP, or NONE without such frontends
 * @param clusterIpMasquerade which connections the ClusterIPs send to endpoints are masqueraded
 * @param masqueradeExternal  whether external traffic is masqueraded: policy Cluster while the
 *                            service has endpoints (kube-proxy's external chain marks it first,
 *                            even where none is usable and the traffic is dropped)
 * @param externalLocal       the steps of external traffic under policy Local; null unless
 *                            {@code external} is EXTERNAL_LOCAL
 * @param algorithm           how traffic to the cluster's endpoints picks among them: the Service's
 *                            hashed algorithm ({@link #hashedAlgorithm}) or RANDOM; traffic to this
 *                            node's endpoints (policy Local) always picks at random
 * @param firewall            for loadBalancerSourceRanges: the sources let through to the
 *                            load-balancer IPs (the ranges, then the load-balancer IPs themselves
 *                            when a range holds the node, whose traffic to its own VIP arrives
 *                            from the VIP); empty: no firewall
 */
public record ServicePlan(ServicePortName id, IpFamily family, int port, int nodePort, int affinitySeconds,
        List<Endpoint> clusterEndpoints, List<Endpoint> localEndpoints, Target internal, Target external,
        ClusterIpMasquerade clusterIpMasquerade, boolean masqueradeExternal, ExternalLocalSteps externalLocal,
        List<InetAddress> clusterIPs, List<InetAddress> externalIPs, List<InetAddress> loadBalancerIPs, List<Cidr> firewall,
        LbAlgorithm algorithm) {
    /**
     * The most endpoints a port hashes its clients among: a Maglev table of 100 slots an endpoint
     * is then 102,407 elements a frontend; past it, the port picks at random (README).
     */
    public static final int MAX_HASHED_ENDPOINTS = 1024;

    public ServicePlan {
        clusterEndpoints = List.copyOf(clusterEndpoints);
        localEndpoints = List.copyOf(localEndpoints);
        clusterIPs = List.copyOf(clusterIPs);
        externalIPs = List.copyOf(externalIPs);
        loadBalancerIPs = List.copyOf(loadBalancerIPs);
        firewall = List.copyOf(firewall);
    }

    /** The plan of {@code svc} in family {@code f}; {@code endpoints} may hold both families. */
    public static ServicePlan of(ServicePort svc, List<Endpoint> endpoints, NodeInfo node, ProxyConfig config, IpFamily f) {
        FamilyPolicy policy = FamilyPolicy.of(config, node, f);
        List<Endpoint> eps = endpoints.stream().filter(e -> e.family() == f).toList();
        EndpointSelection sel = EndpointSelector.select(svc, eps, node);
        List<Endpoint> cluster = svc.usesClusterEndpoints() ? sel.cluster() : List.of();
        List<Endpoint> local = svc.usesLocalEndpoints() ? sel.local() : List.of();
        // No endpoint at all: rejected, so that clients fail fast. Endpoints, but none for this
        // traffic (none ready, or none here under policy Local): dropped.
        Target none = sel.anyEndpoints() ? Target.DROP : Target.REJECT;
        Target internal = svc.internalPolicyLocal() ? (local.isEmpty() ? none : Target.LOCAL)
                : (cluster.isEmpty() ? none : Target.CLUSTER);
        Target external;
        if (!svc.hasExternal()) {
            external = Target.NONE;
        } else if (svc.externalPolicyLocal()) {
            // The short-circuit to the cluster endpoints applies only while the service has endpoints.
            external = sel.anyEndpoints() ? Target.EXTERNAL_LOCAL : Target.REJECT;
        } else {
            external = cluster.isEmpty() ? none : Target.CLUSTER;
        }
        ExternalLocalSteps steps = external == Target.EXTERNAL_LOCAL
                ? ExternalLocalSteps.of(policy, !cluster.isEmpty(), !local.isEmpty()) : null;
        List<InetAddress> lbIPs = svc.loadBalancerIPs(f);
        List<Cidr> ranges = svc.loadBalancerSourceRanges(f);
        List<Cidr> firewall = new ArrayList<>();
        if (!ranges.isEmpty() && !lbIPs.isEmpty()) {
            firewall.addAll(ranges);
            boolean holdsNode = ranges.stream().anyMatch(c -> config.nodeIPs().stream().anyMatch(c::contains)
                    || node.addresses().stream().anyMatch(c::contains));
            if (holdsNode) {
                lbIPs.forEach(ip -> firewall.add(new Cidr(ip, f.addressBytes() * 8)));
            }
        }
        return new ServicePlan(svc.id(), f, svc.port(), svc.nodePort(), svc.affinitySeconds(), cluster, local, internal,
                external, policy.clusterIpMasquerade(), external == Target.CLUSTER || external == Target.DROP, steps, svc.clusterIPs(f),
                svc.externalIPs(f), lbIPs, firewall, hashedAlgorithm(svc.algorithm(), cluster.size(), external));
    }

    /**
     * The algorithm the cluster's endpoints are picked by: the Service's, when it hashes clients,
     * for up to {@link #MAX_HASHED_ENDPOINTS} endpoints and unless its external traffic is of
     * policy Local (whose frontends pick among this node's endpoints, which differ from node to
     * node: a hash could not make nodes agree); else RANDOM, kube-proxy's.
     */
    static LbAlgorithm hashedAlgorithm(LbAlgorithm asked, int clusterEndpoints, Target external) {
        return asked.hashed() && clusterEndpoints > 0 && clusterEndpoints <= MAX_HASHED_ENDPOINTS
                && external != Target.EXTERNAL_LOCAL ? asked : LbAlgorithm.RANDOM;
    }

    /** The same plan with its endpoint lists in another order (the nftables renderer keeps indices: see EndpointSlots). */
    public ServicePlan withEndpoints(List<Endpoint> cluster, List<Endpoint> local) {
        return new ServicePlan(id, family, port, nodePort, affinitySeconds, cluster, local, internal, external,
                clusterIpMasquerade, masqueradeExternal, externalLocal, clusterIPs, externalIPs, loadBalancerIPs, firewall,
                algorithm);
    }

    /** The port's protocol. */
    public Protocol protocol() {
        return id.protocol();
    }

    /** Whether clients are sent back to the endpoint they reached (ClientIP session affinity). */
    public boolean sticky() {
        return affinitySeconds > 0;
    }

    /** The external frontends with an address: external IPs, then load-balancer IPs. */
    public List<InetAddress> externalFrontends() {
        List<InetAddress> out = new ArrayList<>(externalIPs);
        out.addAll(loadBalancerIPs);
        return out;
    }
}
