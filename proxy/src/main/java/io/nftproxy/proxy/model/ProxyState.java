package io.nftproxy.proxy.model;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A consistent snapshot of what the proxy programs: every service port, its endpoints (merged
 * across slices, de-duplicated), and this node.
 */
public record ProxyState(SortedMap<ServicePortName, ServicePort> services,
                         Map<ServicePortName, List<Endpoint>> endpoints, NodeInfo node) {
    public ProxyState {
        services = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(services));
        endpoints = Map.copyOf(endpoints);
    }

    public List<Endpoint> endpointsOf(ServicePortName id) {
        return endpoints.getOrDefault(id, List.of());
    }
}
