package io.nftproxy.proxy.sync;

import java.util.Objects;

import io.nftproxy.proxy.model.ServicePortName;

/**
 * Who puts objects into one of our tables: the global skeleton ({@link #GLOBALS}), or one service
 * port. The key of the committed fragments and of chain ownership (a refused transaction is
 * traced back to the service port that owns the chain it failed on).
 */
record Contributor(ServicePortName port) {
    static final Contributor GLOBALS = new Contributor(null);

    static Contributor of(ServicePortName port) {
        return new Contributor(Objects.requireNonNull(port, "port"));
    }

    boolean isGlobals() {
        return port == null;
    }

    @Override
    public String toString() {
        return port == null ? "globals" : port.toString();
    }
}
