package io.nftproxy.proxy.model;

import java.net.InetAddress;
import java.util.List;

/**
 * What kube-proxy needs of one Service port: the addresses it is reached on and its policies.
 * {@code nodePort} and {@code healthCheckNodePort} are 0 when absent; {@code affinitySeconds} is 0
 * without ClientIP affinity; {@code algorithm} is how its endpoints are picked (the Service's
 * annotation, {@link LbAlgorithm#RANDOM} without one).
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
        int healthCheckNodePort,
        LbAlgorithm algorithm) {

    public ServicePort {
        algorithm = algorithm == null ? LbAlgorithm.RANDOM : algorithm;
        clusterIPs = List.copyOf(clusterIPs);
        externalIPs = List.copyOf(externalIPs);
        loadBalancerIPs = List.copyOf(loadBalancerIPs);
        loadBalancerSourceRanges = List.copyOf(loadBalancerSourceRanges);
    }

    /**
     * A service port reached on {@code port}, with nothing else yet: no ClusterIP, no NodePort,
     * Cluster policies, no affinity.
     */
    public static Builder builder(ServicePortName id, int port) {
        return new Builder(id, port);
    }

    /** A builder holding this service port's values, to change some. */
    public Builder toBuilder() {
        return new Builder(id, port).clusterIPs(clusterIPs).nodePort(nodePort).externalIPs(externalIPs)
                .loadBalancerIPs(loadBalancerIPs).loadBalancerSourceRanges(loadBalancerSourceRanges)
                .externalPolicyLocal(externalPolicyLocal).internalPolicyLocal(internalPolicyLocal)
                .affinitySeconds(affinitySeconds).healthCheckNodePort(healthCheckNodePort).algorithm(algorithm);
    }

    /** Names the values of a service port (twelve of them) where a positional constructor would not. */
    public static final class Builder {
        private final ServicePortName id;
        private final int port;
        private List<InetAddress> clusterIPs = List.of();
        private int nodePort;
        private List<InetAddress> externalIPs = List.of();
        private List<InetAddress> loadBalancerIPs = List.of();
        private List<Cidr> loadBalancerSourceRanges = List.of();
        private boolean externalPolicyLocal;
        private boolean internalPolicyLocal;
        private int affinitySeconds;
        private int healthCheckNodePort;
        private LbAlgorithm algorithm = LbAlgorithm.RANDOM;

        private Builder(ServicePortName id, int port) {
            this.id = id;
            this.port = port;
        }

        public Builder clusterIPs(List<InetAddress> ips) {
            clusterIPs = ips;
            return this;
        }

        public Builder nodePort(int p) {
            nodePort = p;
            return this;
        }

        public Builder externalIPs(List<InetAddress> ips) {
            externalIPs = ips;
            return this;
        }

        public Builder loadBalancerIPs(List<InetAddress> ips) {
            loadBalancerIPs = ips;
            return this;
        }

        public Builder loadBalancerSourceRanges(List<Cidr> ranges) {
            loadBalancerSourceRanges = ranges;
            return this;
        }

        public Builder externalPolicyLocal(boolean local) {
            externalPolicyLocal = local;
            return this;
        }

        public Builder internalPolicyLocal(boolean local) {
            internalPolicyLocal = local;
            return this;
        }

        /** ClientIP session affinity for this long; 0 for none. */
        public Builder affinitySeconds(int seconds) {
            affinitySeconds = seconds;
            return this;
        }

        public Builder healthCheckNodePort(int p) {
            healthCheckNodePort = p;
            return this;
        }

        /** How its endpoints are picked (the Service's {@value LbAlgorithm#ANNOTATION}). */
        public Builder algorithm(LbAlgorithm a) {
            algorithm = a;
            return this;
        }

        public ServicePort build() {
            return new ServicePort(id, clusterIPs, port, nodePort, externalIPs, loadBalancerIPs,
                    loadBalancerSourceRanges, externalPolicyLocal, internalPolicyLocal, affinitySeconds, healthCheckNodePort,
                    algorithm);
        }
    }

    public Protocol protocol() {
        return id.protocol();
    }

    /** Whether traffic from outside (NodePort, LB, external IPs) reaches it. */
    public boolean hasExternal() {
        return nodePort != 0 || !externalIPs.isEmpty() || !loadBalancerIPs.isEmpty();
    }

    /**
     * kube-proxy's UsesClusterEndpoints: the service sends some traffic to cluster-wide endpoints:
     * under internalTrafficPolicy Cluster, or whenever it takes external traffic at all (even
     * under externalTrafficPolicy Local, pods' and the node's own traffic to an external
     * frontend is short-circuited to the cluster endpoints).
     */
    public boolean usesClusterEndpoints() {
        return !internalPolicyLocal || hasExternal();
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
        for (InetAddress a : clusterIPs) {
            if (f.contains(a)) {
                return true;
            }
        }
        return false;
    }
}
