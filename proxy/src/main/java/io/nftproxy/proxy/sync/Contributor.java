package io.nftproxy.proxy.sync;

import java.util.Objects;

import io.nftproxy.proxy.model.ServicePortName;

/**
 * Who puts objects into one of our tables: the global skeleton ({@link #GLOBALS}), one service
 * port, or what one service port's last changes leave in place for packets that cross their
 * commits ({@link #transitionOf}, see {@code render/Transitions}). The key of the committed
 * fragments and of chain ownership (a refused transaction is traced back to the service port
 * that owns the chain it failed on).
 */
record Contributor(ServicePortName port, boolean transition) {
    static final Contributor GLOBALS = new Contributor(null, false);

    static Contributor of(ServicePortName port) {
        return new Contributor(Objects.requireNonNull(port, "port"), false);
    }

    /** The elements a port's changes keep for a while after their commits. */
    static Contributor transitionOf(ServicePortName port) {
        return new Contributor(Objects.requireNonNull(port, "port"), true);
    }

    boolean isGlobals() {
        return port == null;
    }

    @Override
    public String toString() {
        return port == null ? "globals" : transition ? port + " (transition)" : port.toString();
    }
}
