package io.nftproxy.proxy.topology;

import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ServicePort;

/**
 * Chooses the endpoints a service port uses, as kube-proxy's topology code does: ready endpoints;
 * when there are none, serving-and-terminating ones; node hints (trafficDistribution
 * PreferSameNode) when every ready endpoint has them and one is for this node, else zone hints
 * when every ready endpoint has them and one is for this node's zone; local endpoints for the
 * Local policies.
 */
public final class EndpointSelector {
    private EndpointSelector() {
    }

    public static EndpointSelection select(ServicePort svc, List<Endpoint> endpoints, NodeInfo node) {
        List<Endpoint> cluster = List.of();
        boolean any = false;
        if (svc.usesClusterEndpoints()) {
            Topology topology = topologyMode(endpoints, node);
            cluster = filter(endpoints, ep -> ep.ready() && topology.admits(ep, node));
            if (cluster.isEmpty()) {
                // No ready endpoint anywhere: fall back to those still serving while terminating.
                cluster = filter(endpoints, ep -> ep.serving() && ep.terminating());
            }
            any = !cluster.isEmpty();
        }
        if (!svc.usesLocalEndpoints()) {
            return new EndpointSelection(cluster, List.of(), any);
        }
        boolean localReady = false;
        boolean localServingTerminating = false;
        for (Endpoint ep : endpoints) {
            if (ep.ready()) {
                any = true;
                localReady |= ep.isLocal(node.name());
            } else if (ep.serving() && ep.terminating()) {
                any = true;
                localServingTerminating |= ep.isLocal(node.name());
            }
        }
        List<Endpoint> local = List.of();
        if (localReady) {
            local = filter(endpoints, ep -> ep.isLocal(node.name()) && ep.ready());
        } else if (localServingTerminating) {
            local = filter(endpoints, ep -> ep.isLocal(node.name()) && ep.serving() && ep.terminating());
        }
        return new EndpointSelection(cluster, local, any);
    }

    /** Which hints, if any, narrow the cluster endpoints. */
    enum Topology {
        NONE, SAME_NODE, SAME_ZONE;

        boolean admits(Endpoint ep, NodeInfo node) {
            return switch (this) {
                case NONE -> true;
                case SAME_NODE -> hintsFor(ep.nodeHints(), node.name());
                case SAME_ZONE -> hintsFor(ep.zoneHints(), node.zone());
            };
        }
    }

    /**
     * Node hints apply when every ready endpoint carries some and one is for this node; else zone
     * hints apply when every ready endpoint carries some, the node has a zone and one is for it;
     * otherwise hints are ignored entirely (upstream's topologyModeFromHints, with the
     * PreferSameTrafficDistribution gate on, as it is by default).
     */
    static Topology topologyMode(List<Endpoint> endpoints, NodeInfo node) {
        boolean allNodeHints = true;
        boolean forNode = false;
        boolean allZoneHints = true;
        boolean forZone = false;
        for (Endpoint ep : endpoints) {
            if (!ep.ready()) {
                continue;
            }
            if (ep.nodeHints() == null || ep.nodeHints().isEmpty()) {
                allNodeHints = false;
            } else if (hintsFor(ep.nodeHints(), node.name())) {
                forNode = true;
            }
            if (ep.zoneHints() == null || ep.zoneHints().isEmpty()) {
                allZoneHints = false;
            } else if (hintsFor(ep.zoneHints(), node.zone())) {
                forZone = true;
            }
        }
        if (allNodeHints && forNode) {
            return Topology.SAME_NODE;
        }
        if (!allZoneHints || !forZone) { // forZone is false on a node without a zone
            return Topology.NONE;
        }
        return Topology.SAME_ZONE;
    }

    /**
     * Whether hints name {@code target}. A node without a zone label (or a name) matches no hint:
     * upstream ignores the hints then ("node is missing label"). The hint sets are immutable,
     * and an immutable set refuses to be asked about null, so the absent value is checked here.
     */
    private static boolean hintsFor(Set<String> hints, String target) {
        return target != null && !target.isEmpty() && hints != null && hints.contains(target);
    }

    private static List<Endpoint> filter(List<Endpoint> eps, Predicate<Endpoint> p) {
        return eps.stream().filter(p).toList();
    }
}
