package io.nftproxy.proxy.config;

import java.util.List;
import java.util.Locale;

import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;

/**
 * How kube-proxy decides that a packet comes from a pod on this node or cluster ("local
 * traffic"): for masquerading off-cluster traffic to ClusterIPs, and for letting pods reach an
 * externalTrafficPolicy Local service's external addresses through every endpoint.
 * <ul>
 * <li>{@code ClusterCIDR}: the source is in the cluster's pod network ({@code --cluster-cidr});</li>
 * <li>{@code NodeCIDR}: the source is in this Node's {@code spec.podCIDRs} (followed as the Node changes);</li>
 * <li>{@code BridgeInterface}: the packet entered through the pods' bridge;</li>
 * <li>{@code InterfaceNamePrefix}: the packet entered through an interface whose name starts with the prefix.</li>
 * </ul>
 * A mode without what it needs for a family (no CIDR of that family) detects nothing there, and
 * the rules that depend on it are left out, as kube-proxy leaves them out.
 *
 * @param interfaceName the bridge, or the interface name prefix; null for the CIDR modes
 */
public record LocalDetection(Mode mode, String interfaceName) {
    /** Linux interface names: at most 15 bytes. */
    private static final int IFNAMSIZ = 16;

    public enum Mode {
        CLUSTER_CIDR("ClusterCIDR"), NODE_CIDR("NodeCIDR"), BRIDGE_INTERFACE("BridgeInterface"),
        INTERFACE_NAME_PREFIX("InterfaceNamePrefix");

        public final String configName;

        Mode(String configName) {
            this.configName = configName;
        }
    }

    public static final LocalDetection CLUSTER_CIDR = new LocalDetection(Mode.CLUSTER_CIDR, null);

    public LocalDetection {
        boolean byInterface = mode == Mode.BRIDGE_INTERFACE || mode == Mode.INTERFACE_NAME_PREFIX;
        if (byInterface != (interfaceName != null)) {
            throw new IllegalArgumentException("detect-local-mode " + mode.configName
                    + (byInterface ? " needs an interface name" : " takes no interface name"));
        }
    }

    /**
     * From flags or configuration, with kube-proxy's defaults and validation: an empty mode is
     * ClusterCIDR; BridgeInterface needs the bridge's name, InterfaceNamePrefix the prefix.
     */
    public static LocalDetection parse(String mode, String bridgeInterface, String interfaceNamePrefix) {
        if (mode == null || mode.isBlank()) {
            return CLUSTER_CIDR;
        }
        for (Mode m : Mode.values()) {
            if (m.configName.equalsIgnoreCase(mode.trim())) {
                return switch (m) {
                    case BRIDGE_INTERFACE -> new LocalDetection(m, interfaceName(bridgeInterface, m, "pod-bridge-interface"));
                    case INTERFACE_NAME_PREFIX -> new LocalDetection(m,
                            interfaceName(interfaceNamePrefix, m, "pod-interface-name-prefix"));
                    default -> new LocalDetection(m, null);
                };
            }
        }
        throw new IllegalArgumentException("unknown detect-local-mode '" + mode + "' (expected ClusterCIDR, NodeCIDR,"
                + " BridgeInterface or InterfaceNamePrefix)");
    }

    private static String interfaceName(String name, Mode m, String flag) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("detect-local-mode " + m.configName + " needs --" + flag);
        }
        String n = name.trim();
        if (n.length() >= IFNAMSIZ || n.contains("/") || n.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("--" + flag + " '" + name + "' is not a valid interface name");
        }
        return n;
    }

    /** Whether the packet's source address decides (else the input interface does). */
    public boolean bySource() {
        return mode == Mode.CLUSTER_CIDR || mode == Mode.NODE_CIDR;
    }

    /** For the CIDR modes: the local networks of {@code f} (empty: nothing is detected in that family). */
    public List<Cidr> cidrs(ProxyConfig cfg, NodeInfo node, IpFamily f) {
        return switch (mode) {
            case CLUSTER_CIDR -> cfg.clusterCIDRs(f);
            case NODE_CIDR -> node.podCIDRs().stream().filter(c -> c.family() == f).toList();
            default -> List.of();
        };
    }

    /** Whether local traffic can be told apart in {@code f} at all. */
    public boolean implemented(ProxyConfig cfg, NodeInfo node, IpFamily f) {
        return !bySource() || !cidrs(cfg, node, f).isEmpty();
    }

    @Override
    public String toString() {
        return mode.configName + (interfaceName == null ? "" : " " + interfaceName.toLowerCase(Locale.ROOT));
    }
}
