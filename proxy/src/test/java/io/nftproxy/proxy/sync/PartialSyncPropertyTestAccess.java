package io.nftproxy.proxy.sync;

import java.util.Random;
import java.util.Set;

import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.proxy.config.ProxyConfig;

/** The property test's configuration, for tests in other packages. */
public final class PartialSyncPropertyTestAccess {
    public static final ProxyConfig CFG = PartialSyncPropertyTest.CFG;

    /** A seeded history, for property tests in other packages. */
    @FunctionalInterface
    public interface History {
        void run(long seed) throws Exception;
    }

    /** {@link PartialSyncPropertyTest#histories}: the same seeds and replay properties. */
    public static void histories(History h) throws Exception {
        PartialSyncPropertyTest.histories(h::run);
    }

    /** {@link Syncer#takeIndicesFrom}: a full sync to compare with partial syncs, endpoints at the indices history gave them. */
    public static void takeIndices(Syncer to, Syncer from) {
        to.takeIndicesFrom(from);
    }

    /** A table with chains and sets in name order: two histories create them in different orders. */
    public static String normalized(TableContents t) {
        return PartialSyncPropertyTest.normalized(t);
    }

    /** Zone hints as the property test draws them: on some endpoints only, for absent zones too. */
    public static Set<String> zoneHints(Random r) {
        return PartialSyncPropertyTest.zoneHints(r);
    }

    /** A node's zone label as the property test draws it: present, absent or empty. */
    public static String zone(Random r) {
        return PartialSyncPropertyTest.ZONES.get(r.nextInt(PartialSyncPropertyTest.ZONES.size()));
    }

    private PartialSyncPropertyTestAccess() {
    }
}
