package io.nftproxy.proxy.sync;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.netlink.ct.ConntrackClient;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.topology.EndpointSelection;
import io.nftproxy.proxy.topology.EndpointSelector;

/**
 * UDP has no connection to end: conntrack keeps DNATing a client's flow to the endpoint it first
 * reached, even after that endpoint left the service; and a flow that began while the service had
 * no endpoint keeps going nowhere, un-NATed, as long as the client keeps retrying. After each sync
 * both kinds of stale UDP flows are deleted from the conntrack table, as kube-proxy does.
 */
public final class StaleUdpFlows implements SyncListener {
    private static final Logger LOG = LoggerFactory.getLogger(StaleUdpFlows.class);

    private final ConntrackClient conntrack;
    private final Map<ServicePortName, Set<InetAddress>> inUse = new HashMap<>();

    public StaleUdpFlows(ConntrackClient conntrack) {
        this.conntrack = conntrack;
    }

    @Override
    public void synced(SyncResult r, long nanos, ObjectStore.Snapshot snap) {
        Iterable<ServicePortName> ids = r.full() || snap.nodeChanged() ? new ArrayList<>(snap.state().services().keySet())
                : snap.changed();
        Set<ServicePortName> gone = new HashSet<>(inUse.keySet());
        gone.removeAll(snap.state().services().keySet());
        List<Runnable> deletions = new ArrayList<>();
        for (ServicePortName id : ids) {
            ServicePort svc = snap.state().services().get(id);
            if (svc == null || svc.protocol() != Protocol.UDP) {
                continue;
            }
            EndpointSelection sel = EndpointSelector.select(svc, snap.state().endpointsOf(id), snap.state().node());
            Set<InetAddress> now = new HashSet<>();
            sel.cluster().forEach(e -> now.add(e.address()));
            sel.local().forEach(e -> now.add(e.address()));
            Set<InetAddress> before = inUse.put(id, now);
            if (before != null) {
                Set<InetAddress> removed = new HashSet<>(before);
                removed.removeAll(now);
                if (!removed.isEmpty()) {
                    deletions.add(() -> forget(svc, removed::contains));
                }
            }
            if ((before == null || before.isEmpty()) && !now.isEmpty()) {
                // Flows that reached the service when nothing could take them were never NATed:
                // their replies would come from the service address itself.
                deletions.add(() -> forget(svc, null));
            }
        }
        inUse.keySet().removeAll(gone);
        deletions.forEach(Runnable::run);
    }

    /**
     * Deletes the service's UDP flows whose replies come from a departed endpoint, or, with
     * {@code departed} null, those that were never NATed (replies from the address they were sent to).
     */
    private void forget(ServicePort svc, Predicate<InetAddress> departed) {
        Set<InetAddress> fronts = new HashSet<>(svc.clusterIPs());
        fronts.addAll(svc.externalIPs());
        fronts.addAll(svc.loadBalancerIPs());
        for (IpFamily f : IpFamily.values()) {
            if (!svc.inFamily(f)) {
                continue;
            }
            try {
                int n = conntrack.deleteWhere(f == IpFamily.V4 ? 4 : 6, e -> e.protocol() == Protocol.UDP.number()
                        && (departed == null ? e.replySrc().equals(e.origDst()) : departed.test(e.replySrc()))
                        && ((fronts.contains(e.origDst()) && e.origDport() == svc.port())
                        || (svc.nodePort() != 0 && e.origDport() == svc.nodePort())));
                if (n > 0) {
                    LOG.info("forgot {} stale UDP flows of {}", n, svc.id());
                }
            } catch (NftException e) {
                LOG.warn("could not clear UDP conntrack entries of {}: {}", svc.id(), e.getMessage());
            }
        }
    }
}
