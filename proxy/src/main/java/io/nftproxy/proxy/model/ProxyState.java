package io.nftproxy.proxy.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A consistent snapshot of what the proxy programs: every service port, its endpoints (merged
 * across slices, de-duplicated), this node, and the service network as the cluster's
 * ServiceCIDR objects declare it. The store hands out {@link VersionedMap}
 * snapshots, taken in constant time per change; other maps are copied. Iteration order is not
 * defined: {@link #sortedServices} gives name order where output must be deterministic.
 */
public record ProxyState(Map<ServicePortName, ServicePort> services,
                         Map<ServicePortName, List<Endpoint>> endpoints, NodeInfo node, List<Cidr> serviceCIDRs) {
    public ProxyState {
        serviceCIDRs = List.copyOf(serviceCIDRs);
        services = services instanceof VersionedMap.Snapshot ? services : Collections.unmodifiableMap(new TreeMap<>(services));
        endpoints = endpoints instanceof VersionedMap.Snapshot ? endpoints : Map.copyOf(endpoints);
    }

    /** Without ServiceCIDR objects (a source that has none). */
    public ProxyState(Map<ServicePortName, ServicePort> services, Map<ServicePortName, List<Endpoint>> endpoints,
                      NodeInfo node) {
        this(services, endpoints, node, List.of());
    }

    public List<Endpoint> endpointsOf(ServicePortName id) {
        return endpoints.getOrDefault(id, List.of());
    }

    /** Every service port in name order: a sorted copy, for full renders and reports. */
    public List<ServicePort> sortedServices() {
        List<ServicePort> out = new ArrayList<>(services.values());
        out.sort(Comparator.comparing(ServicePort::id));
        return out;
    }
}
