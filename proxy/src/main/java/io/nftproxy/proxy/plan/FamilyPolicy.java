package io.nftproxy.proxy.plan;

import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;

/**
 * What holds for every service port of one IP family on this node, decided once: whether traffic
 * from the cluster's pods can be told apart (kube-proxy's local traffic detector is implemented:
 * an interface, or a CIDR of the family to match), and so which connections to a ClusterIP are
 * masqueraded. {@link ServicePlan} carries it for each port; the renderers' shared chains
 * translate it, and match the pods' traffic as the configured detection says.
 *
 * @param podTrafficKnown     whether the pods' traffic can be told apart in this family
 * @param clusterIpMasquerade which connections to a ClusterIP are masqueraded
 */
public record FamilyPolicy(boolean podTrafficKnown, ClusterIpMasquerade clusterIpMasquerade) {
    /** The policy of family {@code f} on {@code node}, as kube-proxy's proxier for that family decides it. */
    public static FamilyPolicy of(ProxyConfig config, NodeInfo node, IpFamily f) {
        boolean known = config.localDetection().implemented(config, node, f);
        ClusterIpMasquerade masquerade = config.masqueradeAll() ? ClusterIpMasquerade.ALL
                : known ? ClusterIpMasquerade.NOT_FROM_PODS : ClusterIpMasquerade.NONE;
        return new FamilyPolicy(known, masquerade);
    }
}
