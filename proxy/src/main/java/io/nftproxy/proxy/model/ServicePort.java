package io.nftproxy.proxy.model;

import java.net.InetAddress;
import java.util.List;

/**
 * What kube-proxy needs of one Service port: the addresses it is reached on and its policies.
 * {@code nodePort} and {@code healthCheckNodePort} are 0 when absent; {@code affinitySeconds} is 0
 * without ClientIP affinity.
 */
public record ServicePort(
        ServicePortName id,
        List<InetAddress> clusterIPs,
        int port,
        int nodePort,
        List<InetAddress> externalIPs,
        List<InetAddress> loadBalancerIPs,
        List<Cidr> loadBalancerSourceRanges,
        boolean externalPolicyLocal,
        boolean internalPolicyLocal,
        int affinitySeconds,
        int healthCheckNodePort) {

    public ServicePort {
        clusterIPs = List.copyOf(clusterIPs);
        externalIPs = List.copyOf(externalIPs);
        loadBalancerIPs = List.copyOf(loadBalancerIPs);
        loadBalancerSourceRanges = List.copyOf(loadBalancerSourceRanges);
    }

    public Protocol protocol() {
        return id.protocol();
    }

    /** Whether traffic from outside (NodePort, LB, external IPs) reaches it. */
    public boolean hasExternal() {
        return nodePort != 0 || !externalIPs.isEmpty() || !loadBalancerIPs.isEmpty();
    }

    /** kube-proxy: the service uses cluster-wide endpoints for some traffic. */
    public boolean usesClusterEndpoints() {
        return !internalPolicyLocal || (hasExternal() && !externalPolicyLocal);
    }

    /** kube-proxy: the service uses node-local endpoints for some traffic. */
    public boolean usesLocalEndpoints() {
        return internalPolicyLocal || (hasExternal() && externalPolicyLocal);
    }

    public List<InetAddress> clusterIPs(IpFamily f) {
        return clusterIPs.stream().filter(f::contains).toList();
    }

    public List<InetAddress> externalIPs(IpFamily f) {
        return externalIPs.stream().filter(f::contains).toList();
    }

    public List<InetAddress> loadBalancerIPs(IpFamily f) {
        return loadBalancerIPs.stream().filter(f::contains).toList();
    }

    public List<Cidr> loadBalancerSourceRanges(IpFamily f) {
        return loadBalancerSourceRanges.stream().filter(c -> c.family() == f).toList();
    }

    /** Whether this port is programmed in the family at all (a ClusterIP of that family). */
    public boolean inFamily(IpFamily f) {
        return !clusterIPs(f).isEmpty();
    }
}
