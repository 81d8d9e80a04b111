package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;

/**
 * A first sync onto a slower kernel than these machines': the transactions shrink to what it
 * commits in about 20 ms ({@link KernelPace}), so a neighbour in our namespace waits no longer
 * for one of them than here; on a fast kernel they stay at the configured size.
 */
class KernelPaceSyncTest {
    static final ProxyConfig CFG = ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse("192.168.50.2")))
            .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16"))).build();

    static ProxyState state(int services) {
        Map<ServicePortName, ServicePort> svcs = new LinkedHashMap<>();
        Map<ServicePortName, List<Endpoint>> eps = new LinkedHashMap<>();
        for (int i = 0; i < services; i++) {
            ServicePortName id = new ServicePortName("ns", "svc-" + i, "http", Protocol.TCP);
            svcs.put(id, ServicePort.builder(id, 80).clusterIPs(List.of(Inet.parse("10.96." + i / 250 + "." + (i % 250 + 1))))
                    .nodePort(30000 + i).build());
            List<Endpoint> list = new ArrayList<>();
            for (int e = 0; e < 10; e++) {
                list.add(Endpoint.ready(Inet.parse("10.244." + i / 250 + "." + (i % 250 + 1)), 8000 + e, "node-b"));
            }
            eps.put(id, list);
        }
        return new ProxyState(svcs, eps, NodeInfo.named("node-a"));
    }

    /** The weights of the transactions of a first sync whose kernel takes {@code nanosPerObject} an object. */
    static List<Integer> firstSync(long nanosPerObject) throws Exception {
        FakeNfTables kernel = new FakeNfTables();
        Syncer syncer = new Syncer(kernel, new NftRenderer(CFG), "nftproxy");
        List<Integer> weights = new ArrayList<>();
        syncer.commitThrough(tx -> {
            CommitStats st = kernel.commit(tx);
            int w = FirstSyncBatches.weight(tx);
            weights.add(w);
            return new CommitStats(st.operations(), st.messages(), st.bytes(), 0, w * nanosPerObject);
        });
        SyncResult r = syncer.sync(state(2000), null);
        assertTrue(r.rejectedServices().isEmpty(), r.rejectedServices().toString());
        return weights;
    }

    @Test
    void aSlowKernelGetsTransactionsOfAbout20Milliseconds() throws Exception {
        // 20 µs an object: the configured 4,096 would hold a neighbour 82 ms.
        List<Integer> slow = firstSync(20_000);
        List<Integer> services = slow.subList(slow.size() / 4, slow.size() - 1);
        for (int w : services) {
            assertTrue(w * 20_000L <= 25_000_000L, "about 20 ms of the kernel's, not more: " + slow);
        }
        List<Integer> fast = firstSync(1_000);
        assertTrue(fast.stream().allMatch(w -> w <= Syncer.FIRST_SYNC_BATCH + 100), "never past the configured size: " + fast);
        assertTrue(fast.stream().anyMatch(w -> w > 3 * Syncer.FIRST_SYNC_BATCH / 4), "a fast kernel keeps it: " + fast);
        assertTrue(slow.size() > 3 * fast.size(), "more, smaller transactions: " + slow.size() + " against " + fast.size());
        assertEquals(slow.stream().mapToInt(Integer::intValue).sum(), fast.stream().mapToInt(Integer::intValue).sum(),
                "the same objects either way");
    }
}
