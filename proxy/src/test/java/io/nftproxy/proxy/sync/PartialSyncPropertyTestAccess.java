package io.nftproxy.proxy.sync;

import io.nftproxy.proxy.config.ProxyConfig;

/** The property test's configuration, for tests in other packages. */
public final class PartialSyncPropertyTestAccess {
    public static final ProxyConfig CFG = PartialSyncPropertyTest.CFG;

    private PartialSyncPropertyTestAccess() {
    }
}
