package io.nftproxy.proxy.kernel;

import static io.nftproxy.sandbox.Sandbox.Outcome.Result.ANSWERED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.Syncer;
import io.nftproxy.sandbox.Netns;

/**
 * {@link CountChangesUnderLoadKernelTest} past the blocks the tree's root asks for: a port of more
 * than 1,024 endpoints is sent to its block's tree by a verdict element of {@code service-chains},
 * which a connection's first packet reads before the block's bit sets. The counts go up and down
 * within a block (bit sets only), across blocks (the verdict element), and across 1,024 (the
 * verdict map and the root's block sets, both ways), while four clients connect as fast as they
 * can: every connection is answered, by an endpoint of a state in force while it was made, and
 * none is lost once (no SYN sent twice). The endpoints are one pod's address on as many ports.
 * Through the ClusterIP, and through the NodePort from the pods while the port's external traffic
 * policy flips between Local (the external chain's verdict map sends them to the cluster count's
 * block) and Cluster (services' verdict map does), with the count and without. And a port with
 * ClientIP affinity, whose chains of its own past 1,024 are rewritten by every change (a rule per
 * endpoint checks its clients) and which goes to the shared sticky chains and back as the count
 * crosses 1,024: no connection lost there either, and a client's connections between two changes
 * all reach one endpoint.
 */
class LargeCountChangesUnderLoadKernelTest {
    static final List<String> CLIENTS = List.of("10.244.2.100", "10.244.2.101", "10.244.2.102", "10.244.2.103");
    static final int FIRST_SOURCE_PORT = 20_000;
    /** Within block 8 (1,025-1,152), into 9 and back, across 1,024 both ways, and further. */
    static final int[] COUNTS = {1100, 1101, 1100, 1152, 1153, 1152, 1024, 1025, 1024, 1160, 1100, 1023, 1281, 1090, 1040,
            1200, 1025, 1110};

    /** What the clients connect to, and how the port is shaped while its count changes. */
    enum Shape {
        /** Its ClusterIP, a plain port. */
        CLUSTER_IP,
        /** Its NodePort from the pods, the external traffic policy Local every other change. */
        NODEPORT_POLICY_FLIPS,
        /** Its ClusterIP, with ClientIP affinity. */
        STICKY
    }

    /** The port with {@code count} endpoints, of external policy Local (its first three on this node) or not. */
    static ProxyState state(int count, boolean local) {
        return state(count, local, 0);
    }

    /** The port with {@code count} endpoints, of external policy Local or not, with ClientIP affinity for {@code affinitySeconds}. */
    static ProxyState state(int count, boolean local, int affinitySeconds) {
        ServicePort svc = ServicePort.builder(ManyEndpointsKernelTest.ID, 80).clusterIPs(List.of(Inet.parse("10.96.0.50")))
                .nodePort(30050).externalPolicyLocal(local).affinitySeconds(affinitySeconds).build();
        List<Endpoint> eps = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            eps.add(Endpoint.ready(Inet.parse(ManyEndpointsKernelTest.POD), ManyEndpointsKernelTest.FIRST_PORT + i,
                    i < 3 ? "node-a" : "node-b"));
        }
        return new ProxyState(Map.of(ManyEndpointsKernelTest.ID, svc), Map.of(ManyEndpointsKernelTest.ID, eps),
                NodeInfo.named("node-a"));
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Shape.class)
    void noConnectionIsLostWhileACountPastTheRootsBlocksChanges(Shape shape) throws Exception {
        boolean local = shape == Shape.NODEPORT_POLICY_FLIPS;
        int affinity = shape == Shape.STICKY ? 10_800 : 0;
        int most = 0;
        for (int c : COUNTS) {
            most = Math.max(most, c);
        }
        try (Topology topo = new Topology(); NftClient nft = NftClient.open(topo.node.ns())) {
            ManyEndpointsKernelTest.serve(topo, most);
            Netns clients = topo.pod(CLIENTS.toArray(new String[0]));
            long synRetransmitsBefore = ConnectingClients.synRetransmits(clients);
            Syncer syncer = new Syncer(nft, new NftRenderer(AffinityAcrossChangesKernelTest.config()), "nftproxy");
            syncer.sync(state(COUNTS[0], local, affinity), null);

            ConcurrentSkipListMap<Long, Integer> inForce = new ConcurrentSkipListMap<>();
            inForce.put(Long.MIN_VALUE, COUNTS[0]);
            AtomicInteger answered = new AtomicInteger();
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            Map<Integer, Integer> byEndpoint = new ConcurrentHashMap<>();
            ConcurrentLinkedQueue<long[]> made = new ConcurrentLinkedQueue<>();
            ConcurrentLinkedQueue<long[]> changes = new ConcurrentLinkedQueue<>(); // each sync's start and end
            List<ConnectingClients.Client> each = CLIENTS.stream()
                    .map(c -> new ConnectingClients.Client(c, FIRST_SOURCE_PORT, 65_536)).toList();
            int syncs = 0;
            String dst = local ? Topology.NODE_IP : "10.96.0.50";
            int dport = local ? 30050 : 80;
            try (ConnectingClients load = new ConnectingClients(topo, clients, each, dst, dport, c -> {
                var o = c.outcome();
                if (o == null || o.result() != ANSWERED) {
                    failures.add(c.client().source() + ": " + (o == null ? c.error() : o));
                    return;
                }
                answered.incrementAndGet();
                int index = Integer.parseInt(o.answeredBy().substring(o.answeredBy().lastIndexOf(':') + 1))
                        - ManyEndpointsKernelTest.FIRST_PORT;
                byEndpoint.merge(index, 1, Integer::sum);
                made.add(new long[] {c.began(), c.ended(), index, CLIENTS.indexOf(c.client().source())});
            })) {
                long deadline = System.nanoTime() + 60_000_000_000L;
                while ((answered.get() < 4_000 || syncs < 150) && System.nanoTime() < deadline) {
                    // Through the NodePort, each count twice, of external policy Local and then
                    // Cluster: the policy flips with the count unchanged, and again as it changes.
                    syncs++;
                    int count = COUNTS[(local ? syncs / 2 : syncs) % COUNTS.length];
                    long began = System.nanoTime();
                    syncer.sync(state(count, local && syncs % 2 == 0, affinity), Set.of(ManyEndpointsKernelTest.ID));
                    long ended = System.nanoTime();
                    inForce.put(ended, count);
                    changes.add(new long[] {began, ended});
                    if (affinity > 0) {
                        // Room between two changes for each client's next connections: the
                        // affinity they must keep while nothing changes.
                        int after = answered.get() + 4 * CLIENTS.size();
                        while (answered.get() < after && System.nanoTime() < deadline) {
                            LockSupport.parkNanos(1_000_000);
                        }
                    }
                }
            }
            for (long[] c : made) {
                int atMost = CountChangesUnderLoadKernelTest.most(inForce, c[0], c[1]);
                if (c[2] < 0 || c[2] >= atMost) {
                    failures.add("endpoint " + c[2] + " answered, not one of the " + atMost + " of a state in force");
                }
            }
            if (affinity > 0) {
                failures.addAll(unsticky(made, changes));
            }
            long retried = ConnectingClients.synRetransmits(clients) - synRetransmitsBefore;
            if (retried != 0) {
                failures.add(retried + " SYNs sent again: connections lost once, answered by TCP's retry");
            }
            List<String> first = new ArrayList<>(failures).subList(0, Math.min(20, failures.size()));
            assertEquals(List.of(), first, failures.size() + " of " + (answered.get() + failures.size())
                    + " connections not answered, or not by an endpoint of a state in force, across " + syncs + " changes");
            assertTrue(syncs >= 150 && answered.get() >= 4_000, "enough of both: " + syncs + " changes, " + answered.get()
                    + " connections");
            if (affinity == 0) {
                assertTrue(byEndpoint.keySet().stream().anyMatch(i -> i >= NftRenderer.MAX_PLAIN_PICK),
                        "answered by endpoints past 1,024 too: " + byEndpoint.size() + " endpoints");
            }
        }
    }

    /**
     * A client's consecutive connections (of {@code made}: began, ended, endpoint, client) that
     * reached two endpoints though no change ran from the first's start to the second's end:
     * ClientIP affinity not kept while nothing changed.
     */
    static List<String> unsticky(Collection<long[]> made, Collection<long[]> changes) {
        List<String> out = new ArrayList<>();
        Map<Long, List<long[]>> byClient = new TreeMap<>();
        for (long[] c : made) {
            byClient.computeIfAbsent(c[3], k -> new ArrayList<>()).add(c);
        }
        int pairs = 0;
        for (List<long[]> cs : byClient.values()) {
            cs.sort(Comparator.comparingLong(c -> c[0]));
            for (int i = 1; i < cs.size(); i++) {
                long[] a = cs.get(i - 1);
                long[] b = cs.get(i);
                boolean changed = changes.stream().anyMatch(ch -> ch[0] <= b[1] && ch[1] >= a[0]);
                if (!changed) {
                    pairs++;
                    if (a[2] != b[2]) {
                        out.add("client " + CLIENTS.get((int) a[3]) + " reached endpoint " + a[2] + " then " + b[2]
                                + " with no change between");
                    }
                }
            }
        }
        if (pairs == 0) {
            out.add("no two connections of a client between two changes: affinity not checked");
        }
        return out;
    }
}
