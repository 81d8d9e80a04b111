package io.nftproxy.proxy.source;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/** Where Services, EndpointSlices and Nodes come from, feeding an {@link ObjectStore}. */
public interface Source extends AutoCloseable {
    /**
     * Starts reading: the returned future completes once a first complete listing is in the store
     * (a manifest directory is read before this returns; a cluster lists in the background, retrying
     * while its API server does not answer). With {@code watch}, changes keep arriving after it.
     */
    CompletableFuture<Void> listAndWatch(boolean watch) throws IOException;

    /** Where the objects come from, for log lines ("manifests in DIR", "API server URL"). */
    String where();

    /**
     * How many parts of the source the last listing could not use at all: manifest files
     * refused whole (unreadable, past the size limit, not YAML), whose objects nobody knows.
     */
    default int unusable() {
        return 0;
    }

    @Override
    void close();
}
