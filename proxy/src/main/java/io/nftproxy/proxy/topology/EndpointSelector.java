package io.nftproxy.proxy.topology;

import java.util.List;
import java.util.function.Predicate;

import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ServicePort;

/**
 * Chooses the endpoints a service port uses, as kube-proxy's topology code does: ready endpoints;
 * when there are none, serving-and-terminating ones; zone hints only when every ready endpoint has
 * them and one is for this node's zone; local endpoints for the Local policies.
 */
public final class EndpointSelector {
    private EndpointSelector() {
    }

    public static EndpointSelection select(ServicePort svc, List<Endpoint> endpoints, NodeInfo node) {
        List<Endpoint> cluster = List.of();
        boolean any = false;
        if (svc.usesClusterEndpoints()) {
            boolean topology = canUseTopology(endpoints, node);
            cluster = filter(endpoints, ep -> ep.ready() && (!topology || ep.zoneHints().contains(node.zone())));
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

    /**
     * Topology hints apply when the node has a zone, every ready endpoint carries hints, and at
     * least one ready endpoint is hinted for this zone; otherwise hints are ignored entirely.
     */
    static boolean canUseTopology(List<Endpoint> endpoints, NodeInfo node) {
        if (node.zone() == null || node.zone().isEmpty()) {
            return false;
        }
        boolean forZone = false;
        for (Endpoint ep : endpoints) {
            if (!ep.ready()) {
                continue;
            }
            if (ep.zoneHints() == null || ep.zoneHints().isEmpty()) {
                return false;
            }
            forZone |= ep.zoneHints().contains(node.zone());
        }
        return forZone;
    }

    private static List<Endpoint> filter(List<Endpoint> eps, Predicate<Endpoint> p) {
        return eps.stream().filter(p).toList();
    }
}
