package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.NftRenderer.*;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.topology.EndpointSelection;

/**
 * A service port that needs no chain of its own (the common case): only elements of the shared
 * maps. The verdict map sends it to the pick-k chain of its endpoint count, which draws an index
 * in [0, k) and looks "destination . index" up to find the endpoint; changing it never changes a
 * rule. Services that need more go to {@link ServiceChains}.
 */
final class ServiceData extends RenderPart {
    ServiceData(FragmentBuilder b) {
        super(b);
    }

    /** The k elements "front key . index" to "address . port" that pick-k chooses among. */
    void endpoints(String map, Bytes front, List<Endpoint> eps) {
        for (int i = 0; i < eps.size(); i++) {
            Endpoint e = eps.get(i);
            b.element(map, SetElement.of(Bytes.concat(front, Bytes.host32(i)),
                    Data.value(MapKeys.endpoint(e.address(), e.port()))));
        }
    }

    /** Elements of the shared maps for every frontend of the port, or the no-endpoint sets. */
    void render(ServicePort svc, EndpointSelection sel) {
        int proto = svc.protocol().number();
        List<Endpoint> cluster = svc.usesClusterEndpoints() ? sel.cluster() : List.of();
        List<Endpoint> internal = svc.internalPolicyLocal() ? sel.local() : cluster;
        for (InetAddress ip : svc.clusterIPs(f)) {
            Bytes k = b.key(ip, proto, svc.port());
            if (!internal.isEmpty()) {
                b.element(SERVICE_IPS, SetElement.of(k, Verdict.goTo(PICK + internal.size())));
                endpoints(SERVICE_ENDPOINTS, k, internal);
            } else {
                b.noEndpoints(sel.anyEndpoints(), k, null);
            }
        }
        // External traffic with the Cluster policy (Local goes the way of chains).
        List<InetAddress> front = new ArrayList<>(svc.externalIPs(f));
        front.addAll(svc.loadBalancerIPs(f));
        for (InetAddress ip : front) {
            Bytes k = b.key(ip, proto, svc.port());
            if (!cluster.isEmpty()) {
                b.element(SERVICE_IPS, SetElement.of(k, Verdict.goTo(PICK + cluster.size())));
                endpoints(SERVICE_ENDPOINTS, k, cluster);
                b.element(EXTERNAL_MASQ, SetElement.of(k));
            } else {
                b.noEndpoints(sel.anyEndpoints(), k, null);
            }
        }
        if (svc.nodePort() != 0) {
            Bytes k = b.key(proto, svc.nodePort());
            if (!cluster.isEmpty()) {
                b.element(SERVICE_NODEPORTS, SetElement.of(k, Verdict.goTo(PICK + cluster.size())));
                endpoints(NODEPORT_ENDPOINTS, k, cluster);
                b.element(NODEPORT_MASQ, SetElement.of(k));
            } else {
                b.noEndpoints(sel.anyEndpoints(), null, k);
            }
        }
    }
}
