package io.nftproxy.proxy.model;

import java.net.InetAddress;
import java.util.Set;

import io.nftproxy.netlink.nft.Inet;

/**
 * One endpoint of a service port, from an EndpointSlice. {@code zoneHints} ({@code hints.forZones})
 * and {@code nodeHints} ({@code hints.forNodes}, for trafficDistribution PreferSameNode) are null
 * when the slice gave none for it.
 */
public record Endpoint(InetAddress address, int port, String nodeName, String zone, boolean ready, boolean serving,
                       boolean terminating, Set<String> zoneHints, Set<String> nodeHints) {
    public Endpoint {
        zoneHints = zoneHints == null ? null : Set.copyOf(zoneHints);
        nodeHints = nodeHints == null ? null : Set.copyOf(nodeHints);
    }

    public Endpoint(InetAddress address, int port, String nodeName, String zone, boolean ready, boolean serving,
                    boolean terminating, Set<String> zoneHints) {
        this(address, port, nodeName, zone, ready, serving, terminating, zoneHints, null);
    }

    public static Endpoint ready(InetAddress address, int port, String nodeName) {
        return new Endpoint(address, port, nodeName, null, true, true, false, null, null);
    }

    /** The same endpoint on another port (a slice's endpoints serve each of its ports). */
    public Endpoint withPort(int p) {
        return new Endpoint(address, p, nodeName, zone, ready, serving, terminating, zoneHints, nodeHints);
    }

    public boolean isLocal(String node) {
        return nodeName != null && nodeName.equals(node);
    }

    public IpFamily family() {
        return IpFamily.of(address);
    }

    /** "ip:port" with IPv6 in brackets. */
    public String hostPort() {
        String a = Inet.format(address);
        return (family() == IpFamily.V6 ? "[" + a + "]" : a) + ":" + port;
    }
}
