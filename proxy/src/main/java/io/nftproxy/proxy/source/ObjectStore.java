package io.nftproxy.proxy.source;

import java.time.Instant;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.model.VersionedMap;
import io.nftproxy.proxy.source.KubeObject.NodeRecord;
import io.nftproxy.proxy.source.KubeObject.ServiceCidrRecord;
import io.nftproxy.proxy.source.KubeObject.ServiceRecord;
import io.nftproxy.proxy.source.KubeObject.SliceRecord;

/**
 * The objects the proxy has seen, from whichever source, already converted to the compact model
 * ({@link KubeModel} converts; the store only holds), and the state a snapshot hands to the sync
 * loop. Three parts with one job each: the {@link SliceIndex} merges a service's endpoints over
 * its slices, the {@link ChangeTracker} notes which services to look at again, and at a snapshot
 * {@link ServiceState#changed} decides, per such service, which of its ports really changed since
 * the previous snapshot. An update equal to what is held is no change (informer resyncs, rewritten
 * files). Thread-safe: sources write, the sync loop reads.
 */
public final class ObjectStore {
    private static final Logger LOG = LoggerFactory.getLogger(ObjectStore.class);

    private final String nodeName;
    private final ProxySelection selection;
    private final Map<ObjectKey, ServiceRecord> services = new HashMap<>();
    private final Map<ObjectKey, List<Cidr>> serviceCidrs = new HashMap<>();
    private final SliceIndex slices = new SliceIndex();
    private final ChangeTracker changes = new ChangeTracker();
    /** Per service: its state as the last snapshot handed it out (absent services are not kept). */
    private final Map<ObjectKey, ServiceState> served = new HashMap<>();
    /** What snapshots hand out: versioned, so that a snapshot costs the same at 10 and at 100,000 services. */
    private final VersionedMap<ServicePortName, ServicePort> allPorts = new VersionedMap<>();
    private final VersionedMap<ServicePortName, List<Endpoint>> allEndpoints = new VersionedMap<>();
    /** Object (or conflict) to what is wrong with it; versioned, as a snapshot hands it out whole. */
    private final VersionedMap<Problem, String> errors = new VersionedMap<>();
    /** Each Service's warnings as last logged ({@link ServiceRecord#warnings}). */
    private final Map<ObjectKey, List<String>> warnings = new HashMap<>();
    private final FrontendClaims claims = new FrontendClaims();
    /** Error keys of the conflicts reported now. */
    private final Set<Problem> conflictKeys = new HashSet<>();
    private NodeInfo node;
    /** Whether a Node object for this host is expected (a cluster has one) and whether it is here. */
    private boolean nodeExpected;
    private boolean nodeKnown;
    private Runnable listener = () -> { };

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
            } else if (o instanceof ServiceCidrRecord c) {
                changed = putServiceCidr(c);
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
                case SERVICE_CIDR -> removeServiceCidr(key);
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
        noteWarnings(s.key(), s.warnings());
        changes.service(s.key());
        return true;
    }

    /** Logs a Service's warnings once: when they first appear or change, not at every change of the Service. */
    private void noteWarnings(ObjectKey key, List<String> now) {
        List<String> had = now.isEmpty() ? warnings.remove(key) : warnings.put(key, now);
        if (!now.equals(had)) {
            now.forEach(w -> LOG.warn("{}", w));
        }
    }

    private boolean removeService(ObjectKey key) {
        if (services.remove(key) == null) {
            return false;
        }
        errors.remove(Problem.object(key));
        warnings.remove(key);
        changes.service(key);
        return true;
    }

    private boolean putSlice(SliceRecord s) {
        SliceRecord old = slices.put(s);
        if (s.equals(old)) {
            return false;
        }
        noteErrors(s.key(), s.errors(), "");
        changes.slice(s.service(), old == null ? null : old.service(), trigger(s, old));
        return true;
    }

    private boolean removeSlice(ObjectKey key) {
        SliceRecord old = slices.remove(key);
        if (old == null) {
            return false;
        }
        errors.remove(Problem.object(key));
        changes.slice(null, old.service(), null);
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

    /** A source that has a Node object for this host (a cluster) says so: until it is seen, {@link #nodeMissing}. */
    public synchronized void expectNode() {
        nodeExpected = true;
    }

    /** Whether the Node object for this host is expected and not here (kube-proxy's /healthz then answers 503). */
    public synchronized boolean nodeMissing() {
        return nodeExpected && !nodeKnown;
    }

    /**
     * The service network, as the cluster's ServiceCIDR objects declare it. Not beside kube-proxy
     * ({@code --service-proxy-name}): the unallocated addresses are then kube-proxy's to handle.
     * A change re-renders the table's globals only (counted as a node change: cluster-wide).
     */
    private boolean putServiceCidr(ServiceCidrRecord c) {
        if (selection != ProxySelection.DEFAULT || c.cidrs().equals(serviceCidrs.put(c.key(), c.cidrs()))) {
            return false;
        }
        changes.node();
        return true;
    }

    private boolean removeServiceCidr(ObjectKey key) {
        if (serviceCidrs.remove(key) == null) {
            return false;
        }
        changes.node();
        return true;
    }

    /** Every ServiceCIDR's ranges, once each, in order. */
    private List<Cidr> serviceCidrs() {
        return serviceCidrs.values().stream().flatMap(List::stream).distinct()
                .sorted(Comparator.comparing(Cidr::toString)).toList();
    }

    private boolean putNode(NodeInfo n) {
        if (!nodeName.equals(n.name())) {
            return false;
        }
        nodeKnown = true;
        if (n.equals(node)) {
            return false;
        }
        node = n;
        changes.node();
        return true;
    }

    private boolean removeNode(ObjectKey key) {
        if (!nodeName.equals(key.name())) {
            return false;
        }
        node = NodeInfo.named(nodeName);
        nodeKnown = false;
        changes.node();
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
                           List<Trigger> triggerTimes) {
    }

    /** An endpoints controller's trigger time, and the IP families of the slice it came with. */
    public record Trigger(Instant at, Set<IpFamily> families) {
    }

    /** The slice's trigger time with the families of its endpoints (before or after the change); null without one. */
    private static Trigger trigger(SliceRecord now, SliceRecord old) {
        if (now.triggerTime() == null) {
            return null;
        }
        Set<IpFamily> families = EnumSet.noneOf(IpFamily.class);
        for (SliceRecord r : old == null ? List.of(now) : List.of(now, old)) {
            r.endpoints().values().forEach(eps -> eps.forEach(e -> families.add(e.family())));
        }
        return families.isEmpty() ? null : new Trigger(now.triggerTime(), families);
    }

    /** How many Services the store holds (whether or not a snapshot has taken them yet). */
    public synchronized int serviceCount() {
        return services.size();
    }

    /** Changes seen and not yet taken by a snapshot: services, endpoints. */
    public synchronized long[] pending() {
        return changes.pending();
    }

    /** Merges what changed into the state and returns it; starts tracking changes over. */
    public synchronized Snapshot snapshot() {
        ChangeTracker.Changes c = changes.take();
        Set<ServicePortName> changedPorts = new HashSet<>();
        Set<ServicePortName> reclaim = new HashSet<>();
        for (ObjectKey svc : c.services()) {
            apply(svc, changedPorts, reclaim);
        }
        if (!reclaim.isEmpty()) {
            resolveClaims(reclaim, changedPorts);
        }
        return new Snapshot(new ProxyState(allPorts.snapshot(), allEndpoints.snapshot(), node, serviceCidrs()),
                Set.copyOf(changedPorts), c.node(), errors.snapshot(), c.serviceChanges(), c.endpointChanges(),
                c.triggerTimes());
    }

    /** A service as its Service and slices define it now. */
    private ServiceState current(ObjectKey svc) {
        ServiceRecord rec = services.get(svc);
        Map<ServicePortName, ServicePort> ports = new HashMap<>();
        if (rec != null) {
            rec.ports().forEach(p -> ports.put(p.id(), p));
        }
        return new ServiceState(ports, slices.endpoints(svc));
    }

    /**
     * Brings one service's ports and endpoints in the handed-out state up to date. Ports whose
     * declaration changed are declared again to the frontend claims, which decide how they are
     * served ({@link #resolveClaims}).
     */
    private void apply(ObjectKey svc, Set<ServicePortName> changedPorts, Set<ServicePortName> reclaim) {
        ServiceState before = served.getOrDefault(svc, ServiceState.ABSENT);
        ServiceState now = current(svc);
        Set<ServicePortName> diff = ServiceState.changed(before, now);
        if (diff.isEmpty()) {
            return;
        }
        changedPorts.addAll(diff);
        for (ServicePortName id : diff) {
            ServicePort p = now.ports().get(id);
            if (!Objects.equals(before.ports().get(id), p)) {
                reclaim.addAll(claims.declare(id, p));
            }
            List<Endpoint> eps = now.endpoints().get(id);
            if (eps == null) {
                allEndpoints.remove(id);
            } else {
                allEndpoints.put(id, eps);
            }
        }
        if (now.isAbsent()) {
            served.remove(svc);
        } else {
            served.put(svc, now);
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
