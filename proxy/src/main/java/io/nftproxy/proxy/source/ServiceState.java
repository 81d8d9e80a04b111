package io.nftproxy.proxy.source;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * One service as the proxy serves it: its ports (from the Service) and their endpoints (merged
 * over its EndpointSlices). What a snapshot compares, per changed service, with what the previous
 * snapshot handed out.
 */
record ServiceState(Map<ServicePortName, ServicePort> ports, Map<ServicePortName, List<Endpoint>> endpoints) {
    static final ServiceState ABSENT = new ServiceState(Map.of(), Map.of());

    ServiceState {
        ports = Map.copyOf(ports);
        endpoints = Map.copyOf(endpoints);
    }

    boolean isAbsent() {
        return ports.isEmpty() && endpoints.isEmpty();
    }

    /**
     * The service ports a change from {@code before} to {@code after} touches: a port added,
     * removed or changed, or a port whose endpoints changed (including endpoints that arrived for
     * a port the Service does not declare yet). Ports equal on both sides are left out, so that an
     * update undone before the next sync changes nothing.
     */
    static Set<ServicePortName> changed(ServiceState before, ServiceState after) {
        Set<ServicePortName> out = new HashSet<>();
        addDiffering(before.ports, after.ports, out);
        addDiffering(before.endpoints, after.endpoints, out);
        return out;
    }

    private static <V> void addDiffering(Map<ServicePortName, V> a, Map<ServicePortName, V> b, Set<ServicePortName> out) {
        a.forEach((id, v) -> {
            if (!Objects.equals(v, b.get(id))) {
                out.add(id);
            }
        });
        b.forEach((id, v) -> {
            if (!a.containsKey(id)) {
                out.add(id);
            }
        });
    }
}
