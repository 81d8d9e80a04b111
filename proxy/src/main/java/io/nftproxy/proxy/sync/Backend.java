package io.nftproxy.proxy.sync;

import java.util.Set;

import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePortName;

/** What the sync loop drives: nf_tables over netlink, or the iptables reference backend. */
public interface Backend {
    /** Syncs the state; {@code changed} null asks for a full sync. */
    SyncResult sync(ProxyState state, Set<ServicePortName> changed) throws Exception;

    /**
     * When (nanoTime) the backend wants a sync without changes, to take away what it holds only
     * for a while, or {@link #NOTHING_DUE}.
     */
    default long dueNanos() {
        return NOTHING_DUE;
    }

    long NOTHING_DUE = Long.MAX_VALUE;

    /**
     * Whether what the backend wrote carries other names than its own (nf_tables: a takeover
     * beside our tables went to the other generation): the sync loop then rebuilds once more.
     */
    default boolean underOtherNames() {
        return false;
    }

    /** Whether the next sync must be full. */
    boolean needsFull();

    /**
     * Forgets what was committed, so that the next sync rebuilds everything from nothing and
     * replaces whatever the kernel holds now (after drift, or a failed sync whose effect on our
     * record is unknown).
     */
    default void forgetCommitted() {
    }
}
