package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.MapKeys;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.render.Transitions;

/**
 * What a port's changes keep for connections crossing their commits never changes what a
 * connection that crosses nothing gets: after every sync of a long run of count changes, made
 * faster than the transitional elements go, the index of every endpoint the port's count allows
 * maps to an endpoint of its current set; and once their time has passed, the table is what one
 * full sync writes.
 */
class TransitionsSyncTest {
    static final ServicePortName ID = SyncSpecificationTest.WEB;

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3})
    void theCurrentIndicesAlwaysMapToTheCurrentEndpoints(long seed) throws Exception {
        Random r = new Random(seed);
        List<Endpoint> all = new ArrayList<>();
        for (int i = 0; i < 140; i++) {
            all.add(SyncSpecificationTest.ep("10.244." + (1 + i / 200) + "." + (2 + i % 200), "node-b"));
        }
        FakeNfTables kernel = new FakeNfTables();
        Syncer syncer = new Syncer(kernel, new NftRenderer(SyncSpecificationTest.CFG), "nftproxy");
        long[] now = {0};
        syncer.clock(() -> now[0]);
        ServicePort web = SyncSpecificationTest.web(false);
        NodeInfo node = new NodeInfo("node-a", null, List.of(Inet.parse("192.168.50.2")), false);
        Bytes front = MapKeys.frontend(Inet.parse("10.96.0.10"), 6, 80);
        List<Endpoint> eps = all.subList(0, 3);
        syncer.sync(new ProxyState(Map.of(ID, web), Map.of(ID, eps), node), null);
        for (int step = 0; step < 300; step++) {
            int count = switch (r.nextInt(4)) {
                case 0 -> 1 + r.nextInt(8);
                case 1 -> 1 + r.nextInt(17);
                case 2 -> 120 + r.nextInt(20);
                default -> 1 + r.nextInt(all.size());
            };
            // Some endpoints go, others come: a random subset of the right size.
            List<Endpoint> pool = new ArrayList<>(all);
            java.util.Collections.shuffle(pool, r);
            eps = List.copyOf(pool.subList(0, count));
            syncer.sync(new ProxyState(Map.of(ID, web), Map.of(ID, eps), node), Set.of(ID));
            if (r.nextInt(10) == 0) {
                now[0] += Transitions.GRACE.toNanos();
                syncer.sync(new ProxyState(Map.of(ID, web), Map.of(ID, eps), node), Set.of());
            }
            Set<Bytes> current = new HashSet<>();
            eps.forEach(e -> current.add(MapKeys.endpoint(e.ip(), e.port())));
            String map = "service-endpoints-" + bucket(count);
            Map<Bytes, Bytes> held = new java.util.HashMap<>();
            for (SetElement e : kernel.listElements(Family.IP, "nftproxy", map)) {
                held.put(e.key(), ((Data.Value) e.data()).bytes());
            }
            Set<Bytes> seen = new HashSet<>();
            for (int i = 0; i < count; i++) {
                Bytes ep = held.get(Bytes.concat(front, Bytes.host32(i)));
                assertTrue(ep != null && current.contains(ep), "step " + step + " (" + count + " endpoints): index " + i
                        + " maps to " + ep + ", not an endpoint of the current set");
                seen.add(ep);
            }
            assertEquals(count, seen.size(), "step " + step + ": each endpoint at one index");
        }
    }

    static String bucket(int k) {
        if (k > 128) {
            return "129-256";
        }
        int hi = Math.max(8, Integer.highestOneBit(2 * k - 1));
        return (hi == 8 ? 1 : hi / 2 + 1) + "-" + hi;
    }
}
