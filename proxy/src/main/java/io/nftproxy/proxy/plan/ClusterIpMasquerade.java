package io.nftproxy.proxy.plan;

/**
 * Which connections to a ClusterIP are masqueraded, as kube-proxy decides it for every service
 * port of a family: all with {@code --masquerade-all}, else those not from the cluster's pods
 * where its local traffic detector can tell them apart, else none.
 */
public enum ClusterIpMasquerade {
    /** Every connection ({@code --masquerade-all}). */
    ALL,
    /** Connections whose source is not one of the cluster's pods (kube-proxy's {@code localDetector.IfNotLocal}). */
    NOT_FROM_PODS,
    /** None: the pods' traffic cannot be told apart in this family, and masquerade-all is off. */
    NONE
}
