package io.nftproxy.proxy.source;

/** Identifies a Kubernetes object the proxy reads: its kind, namespace ("default" when absent) and name. */
public record ObjectKey(Kind kind, String namespace, String name) {
    public enum Kind {
        SERVICE("Service"), ENDPOINT_SLICE("EndpointSlice"), NODE("Node"), SERVICE_CIDR("ServiceCIDR");

        private final String apiKind;

        Kind(String apiKind) {
            this.apiKind = apiKind;
        }

        public String apiKind() {
            return apiKind;
        }

        /** The kind of an API object's {@code kind}, null for one the proxy does not read. */
        public static Kind of(String apiKind) {
            for (Kind k : values()) {
                if (k.apiKind.equals(apiKind)) {
                    return k;
                }
            }
            return null;
        }

        public boolean clusterScoped() {
            return this == NODE || this == SERVICE_CIDR;
        }
    }

    /** The key of an object as its metadata gives it: no namespace for a cluster-scoped kind, "default" when absent. */
    public static ObjectKey of(Kind kind, String namespace, String name) {
        return new ObjectKey(kind, kind.clusterScoped() ? "" : namespace(namespace).intern(), name);
    }

    /** Whether objects of this kind have no namespace (Nodes, ServiceCIDRs). */
    public boolean clusterScoped() {
        return kind.clusterScoped();
    }

    /** One rule for namespaces everywhere: absent or empty means "default" (Nodes have none). */
    public static String namespace(String ns) {
        return ns == null || ns.isEmpty() ? "default" : ns;
    }

    /** "namespace/name" ("name" for a Node or a ServiceCIDR). */
    public String path() {
        return clusterScoped() ? name : namespace + "/" + name;
    }

    /** "Service default/web", as errors and logs name objects. */
    @Override
    public String toString() {
        return kind.apiKind + " " + path();
    }
}
