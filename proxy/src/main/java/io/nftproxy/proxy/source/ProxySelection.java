package io.nftproxy.proxy.source;

import java.util.Map;

/**
 * Which Services and EndpointSlices are this proxy's business, by their own labels, as
 * kube-proxy selects them: never an object labelled {@code service.kubernetes.io/headless};
 * without a proxy name, only objects without {@code service.kubernetes.io/service-proxy-name}
 * (a labelled service belongs to another proxy); with one, only the objects labelled with
 * exactly that name (running beside kube-proxy, which leaves those alone).
 *
 * @param proxyName the value of the service-proxy-name label to serve, or null for kube-proxy's role
 */
public record ProxySelection(String proxyName) {
    public static final String SERVICE_PROXY_NAME_LABEL = "service.kubernetes.io/service-proxy-name";
    public static final String HEADLESS_LABEL = "service.kubernetes.io/headless";
    /** kube-proxy's own selection. */
    public static final ProxySelection DEFAULT = new ProxySelection(null);

    public ProxySelection {
        if (proxyName != null && proxyName.isBlank()) {
            throw new IllegalArgumentException("the service proxy name must not be empty");
        }
    }

    /** Whether an object with these labels (null: none) is ours. */
    public boolean selects(Map<?, ?> labels) {
        if (labels == null) {
            return proxyName == null;
        }
        if (labels.containsKey(HEADLESS_LABEL)) {
            return false;
        }
        Object name = labels.get(SERVICE_PROXY_NAME_LABEL);
        return proxyName == null ? !labels.containsKey(SERVICE_PROXY_NAME_LABEL) : proxyName.equals(name);
    }

    /** The same rule as a Kubernetes label selector, for the API server to apply. */
    public String labelSelector() {
        return (proxyName == null ? "!" + SERVICE_PROXY_NAME_LABEL : SERVICE_PROXY_NAME_LABEL + "=" + proxyName)
                + ",!" + HEADLESS_LABEL;
    }
}
