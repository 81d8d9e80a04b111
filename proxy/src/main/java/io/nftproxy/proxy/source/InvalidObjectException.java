package io.nftproxy.proxy.source;

/** A Kubernetes object the proxy cannot program, with the object and the reason. */
public final class InvalidObjectException extends Exception {
    private final String object;

    public InvalidObjectException(String object, String reason) {
        super(object + ": " + reason);
        this.object = object;
    }

    /** "Service default/web", "EndpointSlice default/web-abc12", "file x.yaml". */
    public String object() {
        return object;
    }
}
