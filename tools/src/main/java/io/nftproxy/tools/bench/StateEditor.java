package io.nftproxy.tools.bench;

import java.util.List;
import java.util.Map;

import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.model.VersionedMap;

/**
 * The bench's changing state, kept as the daemon's store keeps it: in versioned maps, whose
 * snapshot copies 256 references and whose first write after one copies a 256th of the
 * entries. Built by copying every service into a new state, each change at 100,000 services
 * allocated four copies of every service, and the bench's own collections of that garbage
 * fell inside timed syncs (a 330 ms pause in one, measured): a cost the daemon does not have.
 */
final class StateEditor {
    private final VersionedMap<ServicePortName, ServicePort> services = new VersionedMap<>();
    private final VersionedMap<ServicePortName, List<Endpoint>> endpoints = new VersionedMap<>();
    private final ProxyState base;
    private ProxyState state;

    StateEditor(ProxyState base) {
        this.base = base;
        base.services().forEach(services::put);
        for (Map.Entry<ServicePortName, List<Endpoint>> e : base.endpoints().entrySet()) {
            endpoints.put(e.getKey(), e.getValue());
        }
        state = snapshot();
    }

    /** The state after the last change. */
    ProxyState state() {
        return state;
    }

    /** Sets a service port and its endpoints ({@code svc} null: removes it); the state after. */
    ProxyState set(ServicePortName id, ServicePort svc, List<Endpoint> eps) {
        if (svc == null) {
            services.remove(id);
            endpoints.remove(id);
        } else {
            services.put(id, svc);
            endpoints.put(id, List.copyOf(eps));
        }
        state = snapshot();
        return state;
    }

    private ProxyState snapshot() {
        return new ProxyState(services.snapshot(), endpoints.snapshot(), base.node(), base.serviceCIDRs());
    }
}
