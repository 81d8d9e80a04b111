package io.nftproxy.proxy.model;

import java.net.InetAddress;
import java.util.List;

/** This node as the proxy sees it: name, zone (for topology hints), primary addresses, deletion. */
public record NodeInfo(String name, String zone, List<InetAddress> addresses, boolean deleting) {
    public NodeInfo {
        addresses = List.copyOf(addresses);
    }

    public static NodeInfo named(String name) {
        return new NodeInfo(name, null, List.of(), false);
    }
}
