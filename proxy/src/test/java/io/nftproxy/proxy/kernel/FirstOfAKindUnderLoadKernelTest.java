package io.nftproxy.proxy.kernel;

import static io.nftproxy.sandbox.Sandbox.Outcome.Result.ANSWERED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.render.Transitions;
import io.nftproxy.proxy.sync.Syncer;

/**
 * Connections from outside the node to an external IP while its port flips between the external
 * traffic policies Cluster and Local, the only Local frontend of the node: each flip to Local
 * brings the local pick tree (its chains, sets, and the rule of {@code ip-external-local} that
 * leads to it) with the frontend's elements, and the tree goes again once the flip back has kept
 * its elements for their time. A connection whose first packet crosses the commit that brings the
 * tree must still be DNATed, by the old generation's rules or the new one's: none is refused,
 * left unanswered, or answered after TCP sent its SYN again.
 */
class FirstOfAKindUnderLoadKernelTest {
    static final ServicePortName ID = new ServicePortName("default", "flip", "http", Protocol.TCP);
    static final String EXTERNAL_IP = "203.0.113.30";
    static final String LOCAL_EP = "10.244.1.2";
    static final String REMOTE_EP = "10.244.1.3";

    static ProxyState state(boolean local) {
        ServicePort port = ServicePort.builder(ID, 80).clusterIPs(List.of(Inet.parse("10.96.0.30")))
                .externalIPs(List.of(Inet.parse(EXTERNAL_IP))).externalPolicyLocal(local).build();
        List<Endpoint> eps = List.of(Endpoint.ready(Inet.parse(LOCAL_EP), 8080, "node-a"),
                Endpoint.ready(Inet.parse(REMOTE_EP), 8080, "node-b"));
        return new ProxyState(Map.of(ID, port), Map.of(ID, eps), NodeInfo.named("node-a"));
    }

    @Test
    void noConnectionIsLostWhenTheFirstLocalFrontendBringsItsTree() throws Exception {
        try (Topology topo = new Topology(); NftClient nft = NftClient.open(topo.node.ns())) {
            topo.pod(LOCAL_EP, REMOTE_EP);
            topo.serve(LOCAL_EP, 8080);
            topo.serve(REMOTE_EP, 8080);
            Syncer syncer = new Syncer(nft, new NftRenderer(AffinityAcrossChangesKernelTest.config()), "nftproxy");
            // The syncer's time jumps past what the flip back to Cluster kept: a sync of its own
            // then takes the local tree away, and the next flip to Local brings it again.
            AtomicLong skipped = new AtomicLong();
            syncer.clock(() -> System.nanoTime() + skipped.get());
            syncer.sync(state(false), null);
            long synRetransmitsBefore = ConnectingClients.synRetransmits(topo.ext);

            AtomicInteger answered = new AtomicInteger();
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            Map<String, Integer> byEndpoint = new ConcurrentHashMap<>();
            // Two clients from outside, each with twenty thousand source ports of its own.
            List<ConnectingClients.Client> two = List.of(new ConnectingClients.Client(Topology.EXT_IP, 20_000, 40_000),
                    new ConnectingClients.Client(Topology.EXT_IP, 40_000, 60_000));
            int cycles = 0;
            try (ConnectingClients load = new ConnectingClients(topo, topo.ext, two, EXTERNAL_IP, 80, c -> {
                if (c.outcome() == null) {
                    failures.add(c.error().toString());
                } else if (c.outcome().result() != ANSWERED) {
                    failures.add(c.outcome().toString());
                } else {
                    answered.incrementAndGet();
                    byEndpoint.merge(c.outcome().answeredBy(), 1, Integer::sum);
                }
            })) {
                long deadline = System.nanoTime() + 60_000_000_000L;
                while ((answered.get() < 3_000 || cycles < 200) && System.nanoTime() < deadline) {
                    syncer.sync(state(true), Set.of(ID));
                    syncer.sync(state(false), Set.of(ID));
                    skipped.addAndGet(Transitions.GRACE.toNanos());
                    syncer.sync(state(false), Set.of());
                    cycles++;
                }
            }
            long retried = ConnectingClients.synRetransmits(topo.ext) - synRetransmitsBefore;
            if (retried != 0) {
                failures.add(retried + " SYNs sent again: connections lost once, answered by TCP's retry");
            }
            assertEquals(List.of(), failures.stream().limit(20).toList(), failures.size() + " of "
                    + (answered.get() + failures.size()) + " connections lost across " + cycles + " cycles");
            assertTrue(cycles >= 200 && answered.get() >= 3_000, "enough of both: " + cycles + " cycles, "
                    + answered.get() + " connections");
            assertTrue(byEndpoint.size() == 2, "answered by both endpoints (Cluster) and the local one (Local): " + byEndpoint);
        }
    }
}
