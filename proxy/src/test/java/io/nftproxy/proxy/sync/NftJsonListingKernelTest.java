package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * An operator's {@code nft -j list ruleset} lists our table whatever it holds: services of every
 * shape, with endpoint counters. The chains of a sticky service past 1,024 endpoints remember
 * a client, and count an endpoint, by keys of constants; loaded padded to four bytes a port,
 * nft 1.0.6 aborted listing them in JSON ({@code mpz_get_be16: Assertion `cnt <= 1'}).
 */
class NftJsonListingKernelTest {
    @Test
    void nftListsOurTableInJson() throws Exception {
        Kernel.require();
        NftRenderer renderer = new NftRenderer(FirstSyncInBatchesKernelTest.config().withEndpointCounters(true));
        try (TestNetns ns = TestNetns.create("nftp-json"); NftClient client = NftClient.open(ns.ns())) {
            new Syncer(client, renderer, "nftproxy").sync(FirstSyncInBatchesKernelTest.state(41), null);
            List<Object> listed = ns.nftJson(); // fails with nft's exit status when nft aborts
            assertTrue(listed.stream().map(String::valueOf).anyMatch(s -> s.contains("chain=svc-ns/svc-0/tcp/80") && s.contains("update")),
                    "the sticky chains of the service past 1,024 endpoints are listed");
            String text = ns.exec("nft", "list", "chain", "ip", "nftproxy", "svc-ns/svc-0/tcp/80");
            assertTrue(text.contains("update @affinity { ip saddr . 10.96.0.1 . 80 . "), "ports read as ports:\n"
                    + text.substring(0, Math.min(600, text.length())));
        }
    }
}
