package io.nftproxy.proxy.topology;

import java.util.List;

import io.nftproxy.proxy.model.Endpoint;

/**
 * Which endpoints a service port uses on this node. {@code cluster}: for traffic under the
 * Cluster policy (empty when the service uses no cluster endpoints); {@code local}: for traffic
 * under the Local policy; {@code anyEndpoints}: whether any usable endpoint exists anywhere (false
 * means REJECT rather than DROP).
 */
public record EndpointSelection(List<Endpoint> cluster, List<Endpoint> local, boolean anyEndpoints) {
    public EndpointSelection {
        cluster = List.copyOf(cluster);
        local = List.copyOf(local);
    }
}
