package io.nftproxy.proxy.counters;

import io.nftproxy.proxy.model.ServicePortName;

/**
 * One exported counter: what it counts, for which service port, and (for an endpoint's
 * connections) which endpoint, as "address:port".
 */
public record CounterSeries(Kind kind, ServicePortName port, String endpoint) {
    public enum Kind {
        /** New connections to the service port, on any of its frontends. */
        CONNECTIONS,
        /** New connections the service port sent to one endpoint. */
        ENDPOINT_CONNECTIONS,
        /** New connections rejected: the service port has no endpoints. */
        REJECTED,
        /** New connections dropped: no endpoint usable here (traffic policy Local). */
        DROPPED
    }
}
