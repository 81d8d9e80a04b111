package io.nftproxy.proxy.plan;

/** Where a service port's traffic to one kind of frontend goes, whichever backend carries it out. */
public enum Target {
    /** To the cluster endpoints (policy Cluster, or the in-cluster short-circuit of policy Local). */
    CLUSTER,
    /** To this node's endpoints only (traffic policy Local). */
    LOCAL,
    /**
     * External traffic under policy Local: traffic from this node's pods and from the node itself
     * goes to the cluster endpoints (as if it had left and come back through a load balancer; the
     * node's own masqueraded), the rest to this node's endpoints, or dropped when it has none.
     */
    EXTERNAL_LOCAL,
    /** Rejected (ICMP port unreachable / TCP reset): the service has no endpoints at all. */
    REJECT,
    /** Dropped: the service has endpoints, none for this traffic. */
    DROP,
    /** Nothing: the service port has no frontend of this kind. */
    NONE
}
