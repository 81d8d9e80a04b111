package io.nftproxy.proxy.plan;

import java.net.InetAddress;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;

/**
 * Which IP families the node holds a table of: the node's primary family always, and another
 * while the node or a service has it — an address of the node in it (configured or the Node
 * object's), a cluster, service, pod or NodePort CIDR in it, or a service port with a ClusterIP
 * in it (a port is programmed only in the families of its ClusterIPs).
 *
 * <p>kube-proxy writes a table for each family the kernel supports, so a node without IPv6 holds
 * an ip6 table that no packet of a service ever reaches; every tool that lists the ruleset reads
 * it, and it keeps two rules that act on other traffic (dropping forwarded packets conntrack calls
 * invalid, masquerading packets someone else marked with the masquerade bit) for a family the
 * cluster does not use. The first thing of the family (a dual-stack service, a ServiceCIDR)
 * brings the table, written whole in the sync that brings it; the last one takes it away.
 */
public final class TableFamilies {
    private TableFamilies() {
    }

    /**
     * The families the node holds a table of whatever its services are: the primary family (of
     * the first configured node IP, else of the Node object's first address, else IPv4) and each
     * family the node's addresses or the configured networks have.
     */
    public static EnumSet<IpFamily> ofNode(ProxyConfig config, ProxyState state) {
        EnumSet<IpFamily> out = EnumSet.of(primary(config, state));
        for (IpFamily f : IpFamily.values()) {
            if (!out.contains(f) && (addresses(config, state).anyMatch(f::contains)
                    || !config.clusterCIDRs(f).isEmpty()
                    || !config.serviceCIDRs(f, state.serviceCIDRs()).isEmpty()
                    || !config.nodePortAddresses(f).isEmpty()
                    || state.node().podCIDRs().stream().anyMatch(c -> c.family() == f))) {
                out.add(f);
            }
        }
        return out;
    }

    /** The families of the node, and of each family some port of {@code portsByFamily} (counts) is programmed in. */
    public static EnumSet<IpFamily> of(ProxyConfig config, ProxyState state, Map<IpFamily, Integer> portsByFamily) {
        EnumSet<IpFamily> out = ofNode(config, state);
        portsByFamily.forEach((f, n) -> {
            if (n > 0) {
                out.add(f);
            }
        });
        return out;
    }

    /** Counts {@code svc}'s families into {@code portsByFamily} ({@code delta} +1 or -1; a null port counts nothing). */
    public static void count(Map<IpFamily, Integer> portsByFamily, ServicePort svc, int delta) {
        if (svc == null) {
            return;
        }
        for (IpFamily f : IpFamily.values()) {
            if (svc.inFamily(f)) {
                portsByFamily.merge(f, delta, (a, b) -> a + b == 0 ? null : a + b);
            }
        }
    }

    private static IpFamily primary(ProxyConfig config, ProxyState state) {
        return addresses(config, state).findFirst().map(IpFamily::of).orElse(IpFamily.V4);
    }

    /** The node's addresses, the configured ones first; loopback addresses are no node's. */
    private static Stream<InetAddress> addresses(ProxyConfig config, ProxyState state) {
        List<InetAddress> node = state.node().addresses();
        return Stream.concat(config.nodeIPs().stream(), node.stream()).filter(a -> !a.isLoopbackAddress());
    }
}
