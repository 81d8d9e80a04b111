package io.nftproxy.proxy.config;

import java.net.InetAddress;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;

/**
 * Where NodePorts (and healthCheckNodePorts) are served, per IP family, as kube-proxy's
 * {@code NewNodePortAddresses} decides it; one decision for both backends and the health servers.
 * <ul>
 * <li>CIDRs given: those of the family; none of the family means every address of it (kube-proxy
 * falls back to {@code 0.0.0.0/0} or {@code ::/0} rather than serve nothing).</li>
 * <li>"primary" (the default, empty here): the node's primary IP of the family, from
 * {@code --node-ip}/{@code bindAddress} first, else the Node object's addresses; a family the node
 * has no IP of: every address of it, as above.</li>
 * </ul>
 */
public final class NodePortAddresses {
    private NodePortAddresses() {
    }

    /** The CIDR that matches every address of {@code f}. */
    public static Cidr all(IpFamily f) {
        return new Cidr(Inet.parse(f == IpFamily.V4 ? "0.0.0.0" : "::"), 0);
    }

    /** Loopback's network: never a NodePort address when every address is (kube-proxy's "no localhost"). */
    public static Cidr loopback(IpFamily f) {
        return f == IpFamily.V4 ? new Cidr(Inet.parse("127.0.0.0"), 8) : new Cidr(Inet.parse("::1"), 128);
    }

    public static boolean matchesAll(List<Cidr> cidrs) {
        return cidrs.stream().anyMatch(c -> c.prefix() == 0);
    }

    /** The CIDRs the NodePorts of family {@code f} are served on: never empty. */
    public static List<Cidr> of(ProxyConfig config, NodeInfo node, IpFamily f) {
        if (!config.nodePortAddresses().isEmpty()) {
            List<Cidr> given = config.nodePortAddresses(f);
            return given.isEmpty() ? List.of(all(f)) : given;
        }
        return primary(config, node, f).map(ip -> List.of(new Cidr(ip, f.addressBytes() * 8))).orElse(List.of(all(f)));
    }

    /** The node's primary IP of the family: the configured one, else the first of the Node object's. */
    public static Optional<InetAddress> primary(ProxyConfig config, NodeInfo node, IpFamily f) {
        return Stream.concat(config.nodeIPs().stream(), node.addresses().stream())
                .filter(f::contains).filter(ip -> !ip.isLoopbackAddress()).findFirst();
    }
}
