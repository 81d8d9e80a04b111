package io.nftproxy.proxy.model;

import java.net.InetAddress;
import java.util.Set;

/**
 * One endpoint of a service port, from an EndpointSlice. {@code zoneHints} is null when the slice
 * gave no hints for it.
 */
public record Endpoint(InetAddress address, int port, String nodeName, String zone, boolean ready, boolean serving,
                       boolean terminating, Set<String> zoneHints) {
    public Endpoint {
        zoneHints = zoneHints == null ? null : Set.copyOf(zoneHints);
    }

    public static Endpoint ready(InetAddress address, int port, String nodeName) {
        return new Endpoint(address, port, nodeName, null, true, true, false, null);
    }

    public boolean isLocal(String node) {
        return nodeName != null && nodeName.equals(node);
    }

    public IpFamily family() {
        return IpFamily.of(address);
    }

    /** "ip:port" with IPv6 in brackets. */
    public String hostPort() {
        String a = io.nftproxy.netlink.nft.Inet.format(address);
        return (family() == IpFamily.V6 ? "[" + a + "]" : a) + ":" + port;
    }
}
