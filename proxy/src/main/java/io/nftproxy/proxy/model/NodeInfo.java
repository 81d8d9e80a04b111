package io.nftproxy.proxy.model;

import java.net.InetAddress;
import java.util.List;

/**
 * This node as the proxy sees it: name, zone (for topology hints), primary addresses, whether it
 * is leaving ({@code deleting}: being deleted, or tainted ToBeDeletedByClusterAutoscaler; /healthz
 * then says it is not eligible), and its pod CIDRs ({@code spec.podCIDRs}, for local traffic
 * detection by NodeCIDR).
 */
public record NodeInfo(String name, String zone, List<InetAddress> addresses, boolean deleting, List<Cidr> podCIDRs) {
    public NodeInfo {
        addresses = List.copyOf(addresses);
        podCIDRs = List.copyOf(podCIDRs);
    }

    public NodeInfo(String name, String zone, List<InetAddress> addresses, boolean deleting) {
        this(name, zone, addresses, deleting, List.of());
    }

    public static NodeInfo named(String name) {
        return new NodeInfo(name, null, List.of(), false);
    }
}
