package io.nftproxy.proxy.source;

import java.net.InetAddress;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.model.VersionedMap;
import io.nftproxy.proxy.source.KubeObject.NodeRecord;
import io.nftproxy.proxy.source.KubeObject.ServiceRecord;
import io.nftproxy.proxy.source.KubeObject.SliceRecord;

/**
 * The objects the proxy has seen, from whichever source, already converted to the compact model,
 * and the change tracking between syncs: which services changed since the last snapshot. An update
 * equal to what is held is no change (informer resyncs, rewritten files). Thread-safe: sources
 * write, the sync loop reads.
 */
public final class ObjectStore {
    private static final Logger LOG = LoggerFactory.getLogger(ObjectStore.class);

    private final String nodeName;
    private final Map<ObjectKey, ServiceRecord> services = new HashMap<>();
    private final Map<ObjectKey, SliceRecord> slices = new HashMap<>();
    private final Map<String, Set<ObjectKey>> slicesByService = new HashMap<>();
    /** Per service ("namespace/name"): its ports and merged endpoints as of the last snapshot. */
    private final Map<String, List<ServicePort>> portsByService = new HashMap<>();
    private final Map<String, Map<ServicePortName, List<Endpoint>>> endpointsByService = new HashMap<>();
    /** Every port and every port's endpoints, kept up to date at each snapshot. */
    /** What snapshots hand out: versioned, so that a snapshot costs the same at 10 and at 100,000 services. */
    private final VersionedMap<ServicePortName, ServicePort> allPorts = new VersionedMap<>();
    private final VersionedMap<ServicePortName, List<Endpoint>> allEndpoints = new VersionedMap<>();
    /** Object (or conflict) to what is wrong with it; versioned, as a snapshot hands it out whole. */
    private final VersionedMap<Problem, String> errors = new VersionedMap<>();
    private final Set<String> dirty = new HashSet<>();
    private final FrontendClaims claims = new FrontendClaims();
    /** Error keys of the conflicts reported now. */
    private final Set<Problem> conflictKeys = new HashSet<>();
    private NodeInfo node;
    private boolean nodeChanged = true;
    private long serviceChanges;
    private long endpointChanges;
    private long servicesAtSnapshot;
    private long endpointsAtSnapshot;
    private final List<Instant> triggerTimes = new ArrayList<>();
    private Runnable listener = () -> { };

    private final ProxySelection selection;

    public ObjectStore(String nodeName) {
        this(nodeName, ProxySelection.DEFAULT);
    }

    /** A store for a proxy that serves the Services and EndpointSlices {@code selection} selects. */
    public ObjectStore(String nodeName, ProxySelection selection) {
        this.nodeName = nodeName;
        this.node = NodeInfo.named(nodeName);
        this.selection = selection;
    }

    /** Which objects the sources should hand over as ours (the others arrive as empty records). */
    public ProxySelection selection() {
        return selection;
    }

    /** Called (outside the lock) after every change, to wake the sync loop. */
    public synchronized void onChange(Runnable r) {
        this.listener = r;
    }

    /** Adds or replaces an object; returns whether anything changed for the proxy. */
    public boolean put(KubeObject o) {
        boolean changed;
        synchronized (this) {
            if (o instanceof ServiceRecord s) {
                changed = putService(s);
            } else if (o instanceof SliceRecord s) {
                changed = putSlice(s);
            } else {
                changed = putNode(((NodeRecord) o).node());
            }
        }
        if (changed) {
            listener.run();
        }
        return changed;
    }

    /** Removes an object; returns whether the store held it. */
    public boolean remove(ObjectKey key) {
        boolean changed;
        synchronized (this) {
            changed = switch (key.kind()) {
                case SERVICE -> removeService(key);
                case ENDPOINT_SLICE -> removeSlice(key);
                case NODE -> removeNode(key);
            };
        }
        if (changed) {
            listener.run();
        }
        return changed;
    }

    private boolean putService(ServiceRecord s) {
        if (s.equals(services.put(s.key(), s))) {
            return false;
        }
        noteErrors(s.key(), s.error() == null ? List.of() : List.of(s.error()),
                " (the service is not programmed; every other one is)");
        dirty.add(s.key().path());
        serviceChanges++;
        return true;
    }

    private boolean removeService(ObjectKey key) {
        if (services.remove(key) == null) {
            return false;
        }
        errors.remove(Problem.object(key));
        dirty.add(key.path());
        serviceChanges++;
        return true;
    }

    private boolean putSlice(SliceRecord s) {
        SliceRecord old = slices.put(s.key(), s);
        if (s.equals(old)) {
            return false;
        }
        if (old != null) {
            unlink(old);
        }
        noteErrors(s.key(), s.errors(), "");
        if (s.service() != null) {
            slicesByService.computeIfAbsent(s.service(), x -> new HashSet<>()).add(s.key());
            dirty.add(s.service());
        }
        if (s.triggerTime() != null) {
            triggerTimes.add(s.triggerTime());
        }
        endpointChanges++;
        return true;
    }

    private boolean removeSlice(ObjectKey key) {
        SliceRecord old = slices.remove(key);
        if (old == null) {
            return false;
        }
        unlink(old);
        errors.remove(Problem.object(key));
        endpointChanges++;
        return true;
    }

    /** Keeps an object's problems for reports, and logs them when they are new. */
    private void noteErrors(ObjectKey key, List<String> problems, String suffix) {
        String msg = problems.isEmpty() ? null : String.join("; ", problems);
        String had = msg == null ? errors.remove(Problem.object(key)) : errors.put(Problem.object(key), msg);
        if (msg != null && !msg.equals(had)) {
            LOG.error("{}{}", msg, suffix);
        }
    }

    private void unlink(SliceRecord old) {
        if (old.service() != null) {
            Set<ObjectKey> s = slicesByService.get(old.service());
            if (s != null) {
                s.remove(old.key());
                if (s.isEmpty()) {
                    slicesByService.remove(old.service());
                }
            }
            dirty.add(old.service());
        }
    }

    private boolean putNode(NodeInfo n) {
        if (!nodeName.equals(n.name()) || n.equals(node)) {
            return false;
        }
        node = n;
        nodeChanged = true;
        return true;
    }

    private boolean removeNode(ObjectKey key) {
        if (!nodeName.equals(key.name())) {
            return false;
        }
        node = NodeInfo.named(nodeName);
        nodeChanged = true;
        return true;
    }

    /**
     * A consistent state and what changed since the previous snapshot: the service ports whose
     * service or endpoints changed, whether the node changed, the objects that cannot be programmed
     * (with why), how many service and endpoint changes were seen, and the trigger times of the
     * changed EndpointSlices (for network programming latency).
     */
    public record Snapshot(ProxyState state, Set<ServicePortName> changed, boolean nodeChanged,
                           Map<Problem, String> errors, long serviceChanges, long endpointChanges,
                           List<Instant> triggerTimes) {
    }

    /** Changes seen and not yet taken by a snapshot: services, endpoints. */
    public synchronized long[] pending() {
        return new long[] {serviceChanges - servicesAtSnapshot, endpointChanges - endpointsAtSnapshot};
    }

    /** Merges what changed into the state and returns it; resets the change tracking. */
    public synchronized Snapshot snapshot() {
        Set<ServicePortName> changedPorts = new HashSet<>();
        Set<ServicePortName> reclaim = new HashSet<>();
        for (String svc : dirty) {
            refresh(svc, changedPorts, reclaim);
        }
        if (!dirty.isEmpty()) {
            resolveClaims(reclaim, changedPorts);
        }
        dirty.clear();
        Snapshot snap = new Snapshot(new ProxyState(allPorts.snapshot(), allEndpoints.snapshot(), node), Set.copyOf(changedPorts), nodeChanged,
                errors.snapshot(), serviceChanges - servicesAtSnapshot, endpointChanges - endpointsAtSnapshot,
                List.copyOf(triggerTimes));
        servicesAtSnapshot = serviceChanges;
        endpointsAtSnapshot = endpointChanges;
        triggerTimes.clear();
        nodeChanged = false;
        return snap;
    }

    /** Recomputes one service's ports and endpoints (merged over its slices) and notes which ports changed. */
    private void refresh(String svc, Set<ServicePortName> changedPorts, Set<ServicePortName> reclaim) {
        int slash = svc.indexOf('/');
        ObjectKey key = new ObjectKey(ObjectKey.Kind.SERVICE, svc.substring(0, slash), svc.substring(slash + 1));
        ServiceRecord rec = services.get(key);
        List<ServicePort> ports = rec == null ? List.of() : rec.ports();
        Map<ServicePortName, List<Endpoint>> eps = new LinkedHashMap<>();
        for (ObjectKey sk : slicesByService.getOrDefault(svc, Set.of())) {
            SliceRecord slice = slices.get(sk);
            slice.endpoints().forEach((id, list) -> eps.computeIfAbsent(id, x -> new ArrayList<>()).addAll(list));
        }
        eps.replaceAll((id, list) -> dedupe(list));

        List<ServicePort> before = portsByService.getOrDefault(svc, List.of());
        Map<ServicePortName, List<Endpoint>> epsBefore = endpointsByService.getOrDefault(svc, Map.of());
        for (ServicePort p : before) {
            changedPorts.add(p.id());
            allPorts.remove(p.id());
            reclaim.addAll(claims.declare(p.id(), null));
        }
        for (ServicePort p : ports) {
            changedPorts.add(p.id());
            reclaim.addAll(claims.declare(p.id(), p));
        }
        if (!epsBefore.equals(eps)) {
            changedPorts.addAll(epsBefore.keySet());
            changedPorts.addAll(eps.keySet());
        }
        epsBefore.keySet().forEach(allEndpoints::remove);
        eps.forEach(allEndpoints::put);
        if (ports.isEmpty()) {
            portsByService.remove(svc);
        } else {
            portsByService.put(svc, ports);
        }
        if (eps.isEmpty()) {
            endpointsByService.remove(svc);
        } else {
            endpointsByService.put(svc, eps);
        }
    }

    /**
     * Puts the ports that share a frontend with what changed into the state as they are served
     * (an owner keeps a contested frontend, the others lose it), and reports the conflicts.
     */
    private void resolveClaims(Set<ServicePortName> reclaim, Set<ServicePortName> changedPorts) {
        for (ServicePortName id : reclaim) {
            ServicePort r = claims.resolved(id);
            ServicePort had = allPorts.get(id);
            if (r == null) {
                allPorts.remove(id);
            } else if (!r.equals(had)) {
                allPorts.put(id, r);
                changedPorts.add(id);
            }
        }
        claims.drainTouched().forEach((f, ids) -> {
            Problem key = Problem.conflict(f);
            if (ids.size() < 2) {
                if (conflictKeys.remove(key)) {
                    errors.remove(key);
                }
                return;
            }
            String msg = f + " is claimed by " + ids.size() + " service ports: " + ids.get(0) + " serves it, not "
                    + String.join(", ", ids.subList(1, ids.size()).stream().map(Object::toString).toList());
            if (!msg.equals(errors.get(key))) {
                LOG.warn("{}", msg);
            }
            errors.put(key, msg);
            conflictKeys.add(key);
        });
    }

    /** Frontends (address, protocol and port, or NodePort) claimed by more than one service port now. */
    public synchronized int conflicts() {
        return conflictKeys.size();
    }

    private record HostPort(InetAddress address, int port) {
    }

    /**
     * The same address and port listed twice (in two slices during an update) is one endpoint; a
     * copy that is not terminating wins over one that is, whichever slice comes first.
     */
    private static List<Endpoint> dedupe(List<Endpoint> list) {
        Map<HostPort, Endpoint> byAddr = new LinkedHashMap<>();
        for (Endpoint e : list) {
            HostPort k = new HostPort(e.address(), e.port());
            Endpoint had = byAddr.putIfAbsent(k, e);
            if (had != null && had.terminating() && !e.terminating()) {
                byAddr.put(k, e);
            }
        }
        return List.copyOf(byAddr.values());
    }

    public synchronized NodeInfo node() {
        return node;
    }

    /** Records a problem with a source (an unparseable file) so it is reported with the rest. */
    public synchronized void reportSourceError(String object, String message) {
        if (message == null) {
            errors.remove(Problem.source(object));
        } else {
            errors.put(Problem.source(object), object + ": " + message);
        }
    }
}
