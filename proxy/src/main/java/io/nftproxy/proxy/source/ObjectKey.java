package io.nftproxy.proxy.source;

/** Identifies a Kubernetes object the proxy reads: its kind, namespace ("default" when absent) and name. */
public record ObjectKey(Kind kind, String namespace, String name) {
    public enum Kind {
        SERVICE("Service"), ENDPOINT_SLICE("EndpointSlice"), NODE("Node");

        private final String apiKind;

        Kind(String apiKind) {
            this.apiKind = apiKind;
        }

        public String apiKind() {
            return apiKind;
        }
    }

    /** One rule for namespaces everywhere: absent or empty means "default" (Nodes have none). */
    public static String namespace(String ns) {
        return ns == null || ns.isEmpty() ? "default" : ns;
    }

    /** "namespace/name" ("name" for a Node). */
    public String path() {
        return kind == Kind.NODE ? name : namespace + "/" + name;
    }

    /** "Service default/web", as errors and logs name objects. */
    @Override
    public String toString() {
        return kind.apiKind + " " + path();
    }
}
