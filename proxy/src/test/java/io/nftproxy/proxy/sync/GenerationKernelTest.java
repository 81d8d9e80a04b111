package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * The kernel takes a table written in the second generation (every set and chain named with
 * the suffix resolves), and nft lists it as the first generation's table but for the names;
 * and {@code nft -j} lists both (services of every shape, endpoint counters on).
 */
class GenerationKernelTest {
    @Test
    void theSecondGenerationIsTheSameTableUnderOtherNames() throws Exception {
        Kernel.require();
        // Endpoint counters: the chains of the services past 1,024 endpoints count each endpoint
        // by a lookup of constants, as their affinity rules remember one (nft -j lists both).
        NftRenderer renderer = new NftRenderer(FirstSyncInBatchesKernelTest.config().withEndpointCounters(true));
        var state = FirstSyncInBatchesKernelTest.state(120);
        try (TestNetns first = TestNetns.create("nftp-gen0"); TestNetns second = TestNetns.create("nftp-gen1");
             NftClient a = NftClient.open(first.ns()); NftClient b = NftClient.open(second.ns())) {
            new Syncer(a, renderer, "nftproxy").sync(state, null);
            Syncer renamed = new Syncer(b, renderer, "nftproxy");
            renamed.commitThrough(tx -> b.commit(Generation.SECOND.apply(tx)));
            renamed.sync(state, null);

            List<String> gen0 = normalized(first.nftJson());
            List<String> gen1 = normalized(second.nftJson());
            assertTrue(gen1.stream().anyMatch(s -> s.contains("service-ips" + Generation.SUFFIX)), "listed under the new names");
            assertTrue(gen1.stream().anyMatch(s -> s.startsWith("rule ") && s.contains("chain=nat-prerouting,") && s.contains("target=services" + Generation.SUFFIX)),
                    "the base chains jump to the new generation");
            List<String> back = gen1.stream().map(s -> s.replace(Generation.SUFFIX, "")).sorted().toList();
            assertEquals(gen0.size(), back.size());
            for (int i = 0; i < gen0.size(); i++) {
                assertEquals(gen0.get(i), back.get(i));
            }
        }
    }

    /** nft -j's objects as text, handles left out and set elements in a fixed order, sorted. */
    @SuppressWarnings("unchecked")
    private static List<String> normalized(List<Object> objects) {
        List<String> out = new ArrayList<>();
        for (Object o : objects) {
            Map<String, Object> entry = (Map<String, Object>) o;
            for (Map.Entry<String, Object> e : entry.entrySet()) {
                if (!(e.getValue() instanceof Map<?, ?> body) || e.getKey().equals("metainfo")) {
                    continue;
                }
                Map<String, Object> copy = new LinkedHashMap<>((Map<String, Object>) body);
                copy.remove("handle");
                if (copy.get("elem") instanceof List<?> elems) {
                    List<Object> sorted = new ArrayList<>(elems);
                    sorted.sort(Comparator.comparing(String::valueOf));
                    copy.put("elem", sorted);
                }
                out.add(e.getKey() + " " + copy);
            }
        }
        out.sort(null);
        return out;
    }
}
