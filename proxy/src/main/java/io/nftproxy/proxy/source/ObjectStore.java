package io.nftproxy.proxy.source;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * The Kubernetes objects the proxy has seen, from whichever source, and the change tracking
 * between syncs: which service ports changed since the last snapshot. Conversion happens once per
 * changed service; unchanged services are reused. Thread-safe: sources write, the sync loop reads.
 */
public final class ObjectStore {
    private static final Logger LOG = LoggerFactory.getLogger(ObjectStore.class);

    private final String nodeName;
    private final Map<String, Service> services = new HashMap<>();
    private final Map<String, EndpointSlice> slices = new HashMap<>();
    private final Map<String, Set<String>> slicesByService = new HashMap<>();
    private final Map<String, List<ServicePort>> portsByService = new HashMap<>();
    private final Map<String, Map<ServicePortName, List<Endpoint>>> endpointsByService = new HashMap<>();
    private final Map<String, String> errors = new TreeMap<>();
    private final Set<String> dirty = new HashSet<>();
    private final Set<ServicePortName> changedPorts = new HashSet<>();
    private NodeInfo node;
    private boolean nodeChanged = true;
    private long serviceChanges;
    private long endpointChanges;
    private long servicesAtSnapshot;
    private long endpointsAtSnapshot;
    private final List<java.time.Instant> triggerTimes = new ArrayList<>();
    private Runnable listener = () -> { };

    public ObjectStore(String nodeName) {
        this.nodeName = nodeName;
        this.node = NodeInfo.named(nodeName);
    }

    /** Called (outside the lock) after every change, to wake the sync loop. */
    public synchronized void onChange(Runnable r) {
        this.listener = r;
    }

    private static String key(io.fabric8.kubernetes.api.model.HasMetadata o) {
        String ns = o.getMetadata().getNamespace();
        return (ns == null || ns.isEmpty() ? "default" : ns) + "/" + o.getMetadata().getName();
    }

    public void upsertService(Service s) {
        synchronized (this) {
            String k = key(s);
            services.put(k, s);
            dirty.add(k);
            serviceChanges++;
        }
        listener.run();
    }

    public void deleteService(Service s) {
        synchronized (this) {
            String k = key(s);
            services.remove(k);
            dirty.add(k);
            serviceChanges++;
        }
        listener.run();
    }

    public void upsertSlice(EndpointSlice es) {
        synchronized (this) {
            String k = key(es);
            EndpointSlice old = slices.put(k, es);
            if (old != null) {
                unlink(k, old);
            }
            String svc = KubeModel.sliceService(es);
            if (svc != null) {
                slicesByService.computeIfAbsent(svc, x -> new HashSet<>()).add(k);
                dirty.add(svc);
            }
            java.time.Instant trigger = KubeModel.triggerTime(es);
            if (trigger != null) {
                triggerTimes.add(trigger);
            }
            endpointChanges++;
        }
        listener.run();
    }

    public void deleteSlice(EndpointSlice es) {
        synchronized (this) {
            String k = key(es);
            EndpointSlice old = slices.remove(k);
            if (old != null) {
                unlink(k, old);
            }
            errors.remove("EndpointSlice " + k);
            endpointChanges++;
        }
        listener.run();
    }

    private void unlink(String sliceKey, EndpointSlice old) {
        String svc = KubeModel.sliceService(old);
        if (svc != null) {
            Set<String> s = slicesByService.get(svc);
            if (s != null) {
                s.remove(sliceKey);
            }
            dirty.add(svc);
        }
    }

    public void upsertNode(Node n) {
        if (n.getMetadata() == null || !nodeName.equals(n.getMetadata().getName())) {
            return;
        }
        synchronized (this) {
            NodeInfo ni = KubeModel.node(n);
            if (!ni.equals(node)) {
                node = ni;
                nodeChanged = true;
            }
        }
        listener.run();
    }

    public void deleteNode(Node n) {
        if (n.getMetadata() == null || !nodeName.equals(n.getMetadata().getName())) {
            return;
        }
        synchronized (this) {
            node = NodeInfo.named(nodeName);
            nodeChanged = true;
        }
        listener.run();
    }

    /** A state and the service ports changed since the previous snapshot. */
    /**
     * {@code serviceChanges}/{@code endpointChanges}: changes seen since the previous snapshot;
     * {@code triggerTimes}: when the changed EndpointSlices' changes were triggered (for network
     * programming latency).
     */
    public record Snapshot(ProxyState state, Set<ServicePortName> changed, boolean nodeChanged,
                           Map<String, String> errors, long serviceChanges, long endpointChanges,
                           List<java.time.Instant> triggerTimes) {
    }

    /** Changes seen and not yet taken by a snapshot: services, endpoints. */
    public synchronized long[] pending() {
        return new long[] {serviceChanges - servicesAtSnapshot, endpointChanges - endpointsAtSnapshot};
    }

    /** Converts what changed and returns a consistent state; resets the change tracking. */
    public synchronized Snapshot snapshot() {
        for (String svc : dirty) {
            List<ServicePort> before = portsByService.getOrDefault(svc, List.of());
            Map<ServicePortName, List<Endpoint>> epsBefore = endpointsByService.getOrDefault(svc, Map.of());
            errors.remove("Service " + svc);
            for (String sk : slicesByService.getOrDefault(svc, Set.of())) {
                errors.remove("EndpointSlice " + sk);
            }
            Service s = services.get(svc);
            List<ServicePort> ports = List.of();
            if (s != null) {
                try {
                    ports = KubeModel.servicePorts(s);
                } catch (InvalidObjectException e) {
                    if (!e.getMessage().equals(errors.get(e.object()))) {
                        LOG.error("{} (the service is not programmed; every other one is)", e.getMessage());
                    }
                    errors.put(e.object(), e.getMessage());
                }
            }
            Map<ServicePortName, List<Endpoint>> eps = new LinkedHashMap<>();
            for (String sk : slicesByService.getOrDefault(svc, Set.of())) {
                EndpointSlice es = slices.get(sk);
                Map<ServicePortName, List<Endpoint>> part = KubeModel.sliceEndpoints(es, e -> {
                    if (!e.getMessage().equals(errors.get(e.object()))) {
                        LOG.error("{}", e.getMessage());
                    }
                    errors.put(e.object(), e.getMessage());
                });
                part.forEach((id, list) -> eps.computeIfAbsent(id, x -> new ArrayList<>()).addAll(list));
            }
            // The same endpoint may be listed by two slices (during an update): keep one.
            eps.replaceAll((id, list) -> dedupe(list));
            portsByService.put(svc, ports);
            endpointsByService.put(svc, eps);
            for (ServicePort p : before) {
                changedPorts.add(p.id());
            }
            for (ServicePort p : ports) {
                changedPorts.add(p.id());
            }
            if (!epsBefore.equals(eps)) {
                changedPorts.addAll(epsBefore.keySet());
                changedPorts.addAll(eps.keySet());
            }
            if (ports.isEmpty() && s == null) {
                portsByService.remove(svc);
            }
            if (eps.isEmpty()) {
                endpointsByService.remove(svc);
            }
        }
        dirty.clear();
        TreeMap<ServicePortName, ServicePort> all = new TreeMap<>();
        Map<ServicePortName, List<Endpoint>> allEps = new HashMap<>();
        portsByService.values().forEach(l -> l.forEach(p -> all.put(p.id(), p)));
        endpointsByService.values().forEach(allEps::putAll);
        Snapshot snap = new Snapshot(new ProxyState(all, allEps, node), Set.copyOf(changedPorts), nodeChanged,
                Map.copyOf(errors), serviceChanges - servicesAtSnapshot, endpointChanges - endpointsAtSnapshot,
                List.copyOf(triggerTimes));
        servicesAtSnapshot = serviceChanges;
        endpointsAtSnapshot = endpointChanges;
        triggerTimes.clear();
        changedPorts.clear();
        nodeChanged = false;
        return snap;
    }

    private static List<Endpoint> dedupe(List<Endpoint> list) {
        Map<String, Endpoint> byAddr = new LinkedHashMap<>();
        for (Endpoint e : list) {
            byAddr.putIfAbsent(e.hostPort(), e);
        }
        return List.copyOf(byAddr.values());
    }

    public synchronized NodeInfo node() {
        return node;
    }

    /** Records a problem with a source (an unparseable file) so it is reported with the rest. */
    public synchronized void reportSourceError(String object, String message) {
        if (message == null) {
            errors.remove(object);
        } else {
            errors.put(object, object + ": " + message);
        }
    }
}
