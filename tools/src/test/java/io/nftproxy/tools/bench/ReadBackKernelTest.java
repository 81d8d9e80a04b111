package io.nftproxy.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;
import io.nftproxy.sandbox.Netns;
import io.nftproxy.testkit.Kernel;

/** bench --read-back reads every element we hold, whether it dumps a set or asks for it by key (interval sets: always dumped). */
class ReadBackKernelTest {
    @Test
    void everyHeldElementIsReadBackByDumpOrByKey() throws Exception {
        Kernel.require();
        ProxyConfig cfg = BenchState.config();
        try (Netns ns = Netns.create("nftp-rb"); NftClient client = NftClient.open(ns.ns())) {
            Syncer syncer = new Syncer(client, new NftRenderer(cfg), cfg.table());
            SyncResult synced = syncer.sync(BenchState.mixed(60, 10), null);
            for (int dumpBelow : new int[] {Integer.MAX_VALUE, 20, 0}) {
                ReadBack.Figures f = ReadBack.measure(client, syncer, cfg.table(), dumpBelow);
                assertTrue(f.elementsHeld() > 600, f.toString());
                assertEquals(f.elementsHeld(), f.elementsRead(), "dumping below " + dumpBelow + ": " + f);
                assertEquals(synced.rules(), f.rules(), "every rule of every chain read back: " + f);
                assertEquals(dumpBelow == Integer.MAX_VALUE, f.byKeyNanos() == 0, f.toString());
            }
        }
    }
}
