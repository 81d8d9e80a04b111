package io.nftproxy.proxy.sync;

import java.util.Objects;

import io.nftproxy.proxy.model.ServicePortName;

/**
 * Who puts objects into one of our tables: the global skeleton ({@link #GLOBALS}), one service
 * port, or what one change of a service port leaves in place for packets that cross its commit
 * ({@link #transitionOf}, see {@code render/Transitions}), numbered in the order of the changes.
 * The key of the committed fragments and of chain ownership (a refused transaction is traced back
 * to the service port that owns the chain it failed on).
 */
record Contributor(ServicePortName port, long transition) {
    static final Contributor GLOBALS = new Contributor(null, 0);

    static Contributor of(ServicePortName port) {
        return new Contributor(Objects.requireNonNull(port, "port"), 0);
    }

    /** The elements the {@code n}-th change (n > 0) keeps for a while after its commit. */
    static Contributor transitionOf(ServicePortName port, long n) {
        if (n <= 0) {
            throw new IllegalArgumentException("a transition is numbered from 1: " + n);
        }
        return new Contributor(Objects.requireNonNull(port, "port"), n);
    }

    boolean isGlobals() {
        return port == null;
    }

    boolean isTransition() {
        return transition != 0;
    }

    @Override
    public String toString() {
        return port == null ? "globals" : isTransition() ? port + " (transition " + transition + ")" : port.toString();
    }
}
