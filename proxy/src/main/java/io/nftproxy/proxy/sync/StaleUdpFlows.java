package io.nftproxy.proxy.sync;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.netlink.ct.ConntrackClient;
import io.nftproxy.netlink.ct.ConntrackEntry;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.source.ObjectStore;

/**
 * UDP has no connection to end: conntrack keeps DNATing a client's flow to the endpoint it first
 * reached, even after that endpoint left the service; and a flow that began while the service had
 * no endpoint keeps going nowhere, un-NATed, as long as the client keeps retrying. After a sync,
 * as kube-proxy's conntrack reconciler: UDP flows to a service's ClusterIPs, external and
 * load-balancer IPs and port, or to its NodePort on any address, whose reply does not come from
 * one of its serving endpoints (address and port) are deleted; a service with no serving endpoint,
 * or one that was deleted, keeps none. One conntrack dump per IP family and sync.
 *
 * <p>Where it differs: kube-proxy looks at every UDP service whenever one's endpoints changed;
 * here only the service ports that changed in this sync are looked at (every one at a full sync
 * or a node change), since the others' flows were reconciled when they last changed.
 */
public final class StaleUdpFlows implements SyncListener {
    private static final Logger LOG = LoggerFactory.getLogger(StaleUdpFlows.class);

    /** Hears of each reconciliation: the family, how long it took, how many flows it deleted. */
    @FunctionalInterface
    public interface Observer {
        void reconciled(IpFamily family, long nanos, int deleted);
    }

    /** What one service port's flows may reply from; flows to its frontends replying from elsewhere are stale. */
    record Expected(ServicePort svc, Set<InetSocketAddress> serving) {
        boolean stale(ConntrackEntry e) {
            boolean toService = (svc.clusterIPs().contains(e.origDst()) || svc.externalIPs().contains(e.origDst())
                    || svc.loadBalancerIPs().contains(e.origDst())) && e.origDport() == svc.port()
                    || svc.nodePort() != 0 && e.origDport() == svc.nodePort();
            return toService && !serving.contains(new InetSocketAddress(e.replySrc(), e.replySport()));
        }
    }

    private final ConntrackClient conntrack;
    private final Observer observer;
    /** The UDP service ports as last reconciled: a deleted one's flows go with it. */
    private final Map<ServicePortName, ServicePort> known = new HashMap<>();

    public StaleUdpFlows(ConntrackClient conntrack, Observer observer) {
        this.conntrack = conntrack;
        this.observer = observer;
    }

    public StaleUdpFlows(ConntrackClient conntrack) {
        this(conntrack, (f, nanos, deleted) -> { });
    }

    @Override
    public void synced(SyncResult r, long nanos, ObjectStore.Snapshot snap) {
        Set<ServicePortName> ids = new HashSet<>();
        if (r.full() || snap.nodeChanged()) {
            // The UDP ones only (all of them, at 100,000 service ports, were 70 ms of the sync
            // thread after every full sync), and those known as UDP before (gone or changed since).
            snap.state().services().forEach((id, s) -> {
                if (s.protocol() == Protocol.UDP) {
                    ids.add(id);
                }
            });
            ids.addAll(known.keySet());
        } else {
            ids.addAll(snap.changed());
        }
        Map<IpFamily, List<Expected>> expected = expectations(ids, snap.state());
        for (Map.Entry<IpFamily, List<Expected>> e : expected.entrySet()) {
            reconcile(e.getKey(), e.getValue());
        }
    }

    /** Per family, what the looked-at UDP service ports' flows may reply from; updates what is known. */
    Map<IpFamily, List<Expected>> expectations(Set<ServicePortName> ids, ProxyState state) {
        Map<IpFamily, List<Expected>> out = new EnumMap<>(IpFamily.class);
        for (ServicePortName id : ids) {
            ServicePort svc = state.services().get(id);
            ServicePort before = known.remove(id);
            if (svc != null && svc.protocol() == Protocol.UDP) {
                known.put(id, svc);
                Set<InetSocketAddress> serving = new HashSet<>();
                for (Endpoint ep : state.endpointsOf(id)) {
                    if (ep.serving()) {
                        serving.add(new InetSocketAddress(ep.address(), ep.port()));
                    }
                }
                expect(out, svc, serving);
            }
            if (before != null && !before.equals(svc)) {
                expect(out, before, Set.of()); // deleted, or its frontends changed: no flow to the old ones stays
            }
        }
        return out;
    }

    private static void expect(Map<IpFamily, List<Expected>> out, ServicePort svc, Set<InetSocketAddress> serving) {
        for (IpFamily f : IpFamily.values()) {
            if (svc.inFamily(f)) {
                out.computeIfAbsent(f, k -> new ArrayList<>()).add(new Expected(svc, serving));
            }
        }
    }

    private void reconcile(IpFamily f, List<Expected> expected) {
        long t0 = System.nanoTime();
        try {
            int n = conntrack.deleteWhere(f == IpFamily.V4 ? 4 : 6, e -> e.protocol() == Protocol.UDP.number()
                    && expected.stream().anyMatch(x -> x.stale(e)));
            observer.reconciled(f, System.nanoTime() - t0, n);
            if (n > 0) {
                LOG.info("deleted {} stale UDP conntrack flows ({}) of {} service ports", n, f == IpFamily.V4 ? "IPv4" : "IPv6",
                        expected.size());
            }
        } catch (NftException e) {
            LOG.warn("could not clear stale UDP conntrack flows ({}): {}", f == IpFamily.V4 ? "IPv4" : "IPv6", e.getMessage());
        }
    }
}
