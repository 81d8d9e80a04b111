package io.nftproxy.proxy.counters;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.CountedElement;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.counters.CounterSeries.Kind;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.CountedSet;
import io.nftproxy.proxy.render.MapKeys;

/**
 * Which counter an element of a counting set belongs to, read from the element itself and the
 * state the elements were rendered from: a frontend key names its service port, an endpoint
 * map's data names the endpoint. A pure function of (state, family, set, element).
 */
public final class CounterAttribution {
    private final IpFamily family;
    private final Map<Bytes, ServicePortName> frontends = new HashMap<>();
    private final Map<Bytes, ServicePortName> nodePorts = new HashMap<>();
    /** The key prefix of each service port with chains, as its chain-endpoints elements start ("service IP . proto . port"). */
    private final Map<Bytes, ServicePortName> chainKeys = new HashMap<>();

    public CounterAttribution(ProxyState state, IpFamily family) {
        this.family = family;
        Set<Bytes> ambiguous = new HashSet<>();
        for (ServicePort p : state.services().values()) {
            int proto = p.protocol().number();
            List<InetAddress> front = new ArrayList<>(p.clusterIPs(family));
            front.addAll(p.externalIPs(family));
            front.addAll(p.loadBalancerIPs(family));
            for (InetAddress a : front) {
                frontends.put(MapKeys.frontend(a, proto, p.port()), p.id());
            }
            if (p.nodePort() != 0) {
                nodePorts.put(MapKeys.nodePort(proto, p.nodePort()), p.id());
            }
            // As the chains name the service in their counting key: by its first ClusterIP, or the
            // unspecified address when it has none (then it may not be told apart: dropped).
            List<InetAddress> vips = p.clusterIPs(family);
            Bytes k = MapKeys.frontend(vips.isEmpty() ? zero(family) : vips.get(0), proto, p.port());
            if (chainKeys.putIfAbsent(k, p.id()) != null) {
                ambiguous.add(k);
            }
        }
        ambiguous.forEach(chainKeys::remove);
    }

    private static InetAddress zero(IpFamily f) {
        return Inet.parse(f == IpFamily.V4 ? "0.0.0.0" : "::");
    }

    /** The series an element of {@code set} counts for, or null when it names nothing we serve now. */
    public CounterSeries of(String set, CountedElement e) {
        CountedSet counted = CountedSet.of(set);
        if (counted == null) {
            return null;
        }
        int frontLen = family.addressBytes() + 8;
        Bytes key = e.key();
        switch (counted.key()) {
            case FRONTEND -> {
                return series(counted.met(), frontends.get(key), null);
            }
            case NODEPORT -> {
                return series(counted.met(), nodePorts.get(key), null);
            }
            case FRONTEND_INDEX -> {
                // "frontend . index" to "endpoint . port"
                return key.length() == frontLen + 4
                        ? series(counted.met(), frontends.get(key.slice(0, frontLen)), endpoint(e.data())) : null;
            }
            case NODEPORT_INDEX -> {
                return key.length() == 12 ? series(counted.met(), nodePorts.get(key.slice(0, 8)), endpoint(e.data())) : null;
            }
            case FIRST_CLUSTER_IP_AND_ENDPOINT -> {
                // "service IP . proto . port . endpoint . port"; the unspecified endpoint, port 0,
                // is the external chain's drop when no endpoint is on this node.
                if (key.length() != 2 * frontLen - 4) {
                    return null;
                }
                ServicePortName id = chainKeys.get(key.slice(0, frontLen));
                Bytes ep = key.slice(frontLen, key.length());
                return ep.equals(MapKeys.endpoint(zero(family), 0)) ? series(CountedSet.Met.DROP, id, null)
                        : series(counted.met(), id, endpoint(ep));
            }
            default -> throw new AssertionError(counted.key());
        }
    }

    /** The series of what a packet met, for a service port (null: none we serve now) and an endpoint. */
    private static CounterSeries series(CountedSet.Met met, ServicePortName id, String endpoint) {
        Kind kind = switch (met) {
            case SERVICE -> Kind.CONNECTIONS;
            case ENDPOINT -> Kind.ENDPOINT_CONNECTIONS;
            case REJECT -> Kind.REJECTED;
            case DROP -> Kind.DROPPED;
        };
        return series(kind, id, endpoint);
    }

    private static CounterSeries series(Kind kind, ServicePortName id, String endpoint) {
        return id == null || kind == Kind.ENDPOINT_CONNECTIONS && endpoint == null ? null : new CounterSeries(kind, id, endpoint);
    }

    private String endpoint(Data data) {
        return data instanceof Data.Value v ? endpoint(v.bytes()) : null;
    }

    /** "address:port" ("[address]:port" for IPv6) from "address . port" as the maps lay it out. */
    private String endpoint(Bytes b) {
        return MapKeys.endpointText(b, family.addressBytes());
    }
}
