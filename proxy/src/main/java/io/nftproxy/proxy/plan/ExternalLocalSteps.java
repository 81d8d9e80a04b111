package io.nftproxy.proxy.plan;

/**
 * What external traffic to a port of external traffic policy Local does, in kube-proxy's order
 * (its EXT chain): traffic from this node's pods goes to the cluster endpoints, the node's own
 * traffic is masqueraded and goes there too (both as if it had left and come back through a load
 * balancer), and the rest goes to this node's endpoints, or is dropped where the node has none.
 *
 * @param podsToCluster whether the pods' traffic is sent to the cluster endpoints: while the port
 *                      has cluster endpoints and the pods' traffic can be told apart
 * @param nodeToCluster whether the node's own traffic is masqueraded and sent to the cluster
 *                      endpoints: while the port has cluster endpoints
 * @param restToLocal   whether the rest goes to this node's endpoints (false: dropped)
 */
public record ExternalLocalSteps(boolean podsToCluster, boolean nodeToCluster, boolean restToLocal) {
    /** The steps of a port with cluster endpoints or not, and endpoints on this node or not. */
    public static ExternalLocalSteps of(FamilyPolicy policy, boolean clusterEndpoints, boolean localEndpoints) {
        return new ExternalLocalSteps(clusterEndpoints && policy.podTrafficKnown(), clusterEndpoints, localEndpoints);
    }
}
