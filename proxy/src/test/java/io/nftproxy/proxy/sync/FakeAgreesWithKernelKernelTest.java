package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * The property test's random histories, synced into the kernel and into {@link FakeNfTables}
 * side by side: after every sync both hold the same tables. This keeps the fake honest for the
 * transactions the proxy actually sends, re-assertions included.
 */
class FakeAgreesWithKernelKernelTest {
    @Test
    void theSameSyncsLeaveTheSameTables() throws Exception {
        Kernel.require();
        long base = new Random().nextLong();
        for (int h = 0; h < 12; h++) {
            long seed = base + h;
            Random r = new Random(seed);
            PartialSyncPropertyTest.Model m = new PartialSyncPropertyTest.Model();
            int[] counter = {0};
            FakeNfTables fake = new FakeNfTables();
            try (TestNetns ns = TestNetns.create("nftp-agree"); NftClient client = NftClient.open(ns.ns())) {
                Syncer real = new Syncer(client, new NftRenderer(PartialSyncPropertyTest.CFG), "nftproxy");
                Syncer faked = new Syncer(fake, new NftRenderer(PartialSyncPropertyTest.CFG), "nftproxy");
                Set<ServicePortName> changed = new HashSet<>();
                boolean full = true;
                for (int s = 0; s < 25; s++) {
                    ServicePortName touched = PartialSyncPropertyTest.mutate(r, m, counter);
                    if (touched != null) {
                        changed.add(touched);
                    }
                    if (r.nextInt(2) == 0) {
                        // Now and then the hourly re-assertion: the kernel must take every element
                        // again as a no-op and read every chain back as we wrote it.
                        boolean reassert = !full && r.nextInt(4) == 0;
                        Set<ServicePortName> c = full || reassert ? null : Set.copyOf(changed);
                        SyncResult done = real.sync(m.state(), c);
                        faked.sync(m.state(), c);
                        if (reassert) {
                            assertEquals(false, done.elementsRecreated(), "history " + seed + ", step " + s
                                    + ": the re-assertion repaired in place");
                        }
                        changed.clear();
                        full = false;
                        String kernel = PartialSyncPropertyTest.tables(client);
                        assertEquals(kernel, PartialSyncPropertyTest.tables(fake),
                                "history " + seed + ", step " + s + ": the fake and the kernel disagree");
                        assertEquals(true, kernel.contains("chain services {") && kernel.contains("table ip6 nftproxy"), kernel);
                    }
                }
            }
        }
    }
}
