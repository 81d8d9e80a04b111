package io.nftproxy.proxy.sync;

import java.util.Map;
import java.util.Set;

import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.render.Fragment;

/**
 * What a sync renders: per family, the fragments of the contributors it changes (null for one
 * that goes), in the order sent; the tables it creates; which contributor owns each chain; the
 * time it took; per family, the on-demand parts the services need once the sync is in.
 */
record Rendered(Map<IpFamily, Map<Contributor, Fragment>> changes, Map<IpFamily, TableState> fresh,
                Map<String, Contributor> chainOwners, long renderNanos, Map<IpFamily, Set<String>> demands) {
}
