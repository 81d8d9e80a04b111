package io.nftproxy.proxy.kernel;

import static io.nftproxy.sandbox.Sandbox.Outcome.Result.ANSWERED;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.REFUSED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
import io.nftproxy.sandbox.Netns;

/**
 * New connections made while a service's endpoint count goes up and down, one partial sync after
 * another: none is refused, dropped or sent outside the endpoints the service had. A connection's
 * first packet walks one generation of the rules but reads each set as the kernel has it at that
 * moment, so a packet crossing a commit reads some bits of the count of the old generation and
 * the rest of the new one, and may look up an index neither holds: the sync leaves what such a
 * packet could look up in place for a while (see {@code render/Transitions}). The counts cross
 * bits (4 and 5, 8 and 9 …) and the buckets of the endpoint maps (8 and 9, 16 and 17), both ways.
 * Without those elements every run lost connections (1 to 9 of about 6,000, six runs of six).
 * Now and then the count goes to none, after the earlier changes' time has passed: from one
 * endpoint, whose bucket a neighbour keeps, such a change keeps nothing, and a connection crossing
 * it is answered by an old endpoint or refused as without endpoints; from 17, whose bucket goes
 * with it, it keeps its elements and the bucket until they go. A refusal is right only while no
 * endpoint was in force, and no client's SYN may be sent twice (a connection lost once).
 */
class CountChangesUnderLoadKernelTest {
    static final ServicePortName ID = new ServicePortName("default", "churn", "http", Protocol.TCP);
    static final ServicePortName NEIGHBOUR = new ServicePortName("default", "neighbour", "http", Protocol.TCP);
    static final String CLUSTER_IP = "10.96.0.40";
    static final List<String> EPS = new ArrayList<>();
    static final List<String> CLIENTS = List.of("10.244.2.100", "10.244.2.101", "10.244.2.102", "10.244.2.103");
    /** Counts one after another: every bit of k − 1 flips both ways, and so do two buckets. */
    /** Each client's first source port: the ones after it, in turn, are enough for the run (6,000 connections over four clients; ConnectingClients). */
    static final int FIRST_SOURCE_PORT = 20_000;
    static final int[] COUNTS = {4, 5, 4, 8, 9, 8, 16, 17, 16, 1, 0, 5, 3, 9, 2, 17, 0, 7, 12, 4, 13, 6, 16, 9, 1, 0, 8};

    static {
        for (int i = 0; i < 17; i++) {
            EPS.add("10.244.1." + (2 + i));
        }
    }

    /**
     * The connections that took a TCP retry's second or more, for the failure's message: how long,
     * which endpoint answered, and the counts in force while it was made (with how long after its
     * start each came), so that a lost SYN can be told from the change it crossed.
     */
    static String slowest(Collection<long[]> made, ConcurrentSkipListMap<Long, Integer> inForce) {
        List<String> out = new ArrayList<>();
        for (long[] c : made) {
            if (c[1] - c[0] >= 900_000_000L) {
                Map.Entry<Long, Integer> at = inForce.floorEntry(c[0]);
                List<String> counts = new ArrayList<>(List.of(String.valueOf(at.getValue())));
                inForce.subMap(c[0], true, c[1], true).forEach((t, n) -> counts.add(n + " at +" + (t - c[0]) / 1_000_000 + " ms"));
                out.add((c[1] - c[0]) / 1_000_000 + " ms, answered by " + EPS.get((int) c[2]) + ", counts " + counts);
            }
        }
        return out.isEmpty() ? "no answered connection took a second" : "connections of a second or more: " + out;
    }

    static ProxyState state(int count, boolean sticky, boolean neighbour) {
        ServicePort.Builder b = ServicePort.builder(ID, 80).clusterIPs(List.of(Inet.parse(CLUSTER_IP)));
        if (sticky) {
            b.affinitySeconds(60);
        }
        List<Endpoint> list = EPS.subList(0, count).stream().map(a -> Endpoint.ready(Inet.parse(a), 8080, "node-b")).toList();
        if (!neighbour) {
            return new ProxyState(Map.of(ID, b.build()), Map.of(ID, list), NodeInfo.named("node-a"));
        }
        // A neighbour of three endpoints keeps the tree's chains and its 1-8 bucket declared:
        // from one endpoint to none, the port's change then keeps nothing (Transitions).
        ServicePort other = ServicePort.builder(NEIGHBOUR, 80).clusterIPs(List.of(Inet.parse("10.96.0.41"))).build();
        List<Endpoint> three = EPS.subList(0, 3).stream().map(a -> Endpoint.ready(Inet.parse(a), 8080, "node-b")).toList();
        return new ProxyState(Map.of(ID, b.build(), NEIGHBOUR, other), Map.of(ID, list, NEIGHBOUR, three),
                NodeInfo.named("node-a"));
    }

    @ParameterizedTest(name = "affinity {0}, a neighbour keeping the tree {1}")
    @CsvSource({"false, false", "true, false", "false, true"})
    void noConnectionIsLostWhileTheCountChanges(boolean sticky, boolean neighbour) throws Exception {
        try (Topology topo = new Topology(); NftClient nft = NftClient.open(topo.node.ns())) {
            // Every connection refused is answered by ICMP from the node: without this, the kernel's
            // per-host budget (net.ipv4.icmp_ratelimit, about one a second past a burst of six)
            // drops the answers to a client refused often, and TCP tries again a second later; and
            // so does the namespace's own budget for every destination (icmp_msgs_per_sec 1,000,
            // icmp_msgs_burst 50), which four clients refused without pause while the count is 0
            // spend: a SYN sent again that no rule lost (1 in about 6,000 connections, a run in five).
            topo.node.exec("sysctl", "-qw", "net.ipv4.icmp_ratelimit=0");
            topo.node.exec("sysctl", "-qw", "net.ipv4.icmp_msgs_per_sec=1000000");
            topo.node.exec("sysctl", "-qw", "net.ipv4.icmp_msgs_burst=1000000");
            topo.pod(EPS.toArray(new String[0]));
            for (String ep : EPS) {
                topo.serve(ep, 8080);
            }
            Netns clients = topo.pod(CLIENTS.toArray(new String[0]));
            long synRetransmitsBefore = ConnectingClients.synRetransmits(clients);
            Syncer syncer = new Syncer(nft, new NftRenderer(AffinityAcrossChangesKernelTest.config()), "nftproxy");
            // The syncer's time jumps past what earlier changes keep before each change to no
            // endpoint, as after a quiet while: that change then keeps nothing at all.
            AtomicLong skipped = new AtomicLong();
            syncer.clock(() -> System.nanoTime() + skipped.get());
            syncer.sync(state(COUNTS[0], sticky, neighbour), null);

            // When each count came into force (nanoTime once its sync returned): a connection may
            // be answered by an endpoint of any state in force while it was made, no other.
            ConcurrentSkipListMap<Long, Integer> inForce = new ConcurrentSkipListMap<>();
            inForce.put(Long.MIN_VALUE, COUNTS[0]);
            AtomicInteger answered = new AtomicInteger();
            Queue failures = new Queue();
            Map<String, Integer> byEndpoint = new ConcurrentHashMap<>();
            // Each answered connection: when it began and ended, and its endpoint's position in EPS.
            ConcurrentLinkedQueue<long[]> made = new ConcurrentLinkedQueue<>();
            // Each refused one: when it began and ended.
            ConcurrentLinkedQueue<long[]> refused = new ConcurrentLinkedQueue<>();
            List<ConnectingClients.Client> each = CLIENTS.stream()
                    .map(c -> new ConnectingClients.Client(c, FIRST_SOURCE_PORT, 65_536)).toList();
            int syncs = 0;
            try (ConnectingClients load = new ConnectingClients(topo, clients, each, CLUSTER_IP, 80, c -> {
                var o = c.outcome();
                if (o == null) {
                    failures.add(c.client().source() + ": " + c.error());
                } else if (o.result() == REFUSED) {
                    refused.add(new long[] {c.began(), c.ended()});
                } else if (o.result() != ANSWERED) {
                    failures.add(c.client().source() + ": " + o);
                } else {
                    answered.incrementAndGet();
                    byEndpoint.merge(o.answeredBy(), 1, Integer::sum);
                    int index = EPS.indexOf(o.answeredBy().substring(0, o.answeredBy().indexOf(':')));
                    if (index < 0) {
                        failures.add(c.client().source() + ": " + o + ", not an endpoint of the service");
                    } else {
                        made.add(new long[] {c.began(), c.ended(), index});
                    }
                }
            })) {
                // Partial syncs as fast as the kernel takes them, the counts round and round,
                // until the clients have made enough connections across them.
                long deadline = System.nanoTime() + 60_000_000_000L;
                while ((answered.get() < 6_000 || syncs < 400) && System.nanoTime() < deadline) {
                    int count = COUNTS[++syncs % COUNTS.length];
                    if (count == 0) {
                        skipped.addAndGet(Transitions.GRACE.toNanos());
                    }
                    syncer.sync(state(count, sticky, neighbour), Set.of(ID));
                    inForce.put(System.nanoTime(), count);
                }
            }
            // Checked once every count's time is known: a commit may take effect before its sync returns.
            for (long[] c : made) {
                int most = most(inForce, c[0], c[1]);
                if (c[2] >= most) {
                    failures.add(EPS.get((int) c[2]) + " answered, not one of the " + most + " endpoints of a state in force");
                }
            }
            for (long[] c : refused) {
                if (least(inForce, c[0], c[1]) > 0) {
                    failures.add("refused while every state in force had endpoints");
                }
            }
            // A first SYN lost (dropped, or its refusal's ICMP) is answered by TCP's retry a
            // second later, and the clients' kernel counts the retry.
            long retried = ConnectingClients.synRetransmits(clients) - synRetransmitsBefore;
            if (retried != 0) {
                failures.add(retried + " SYNs sent again: connections lost once, answered by TCP's retry; "
                        + slowest(made, inForce));
            }
            assertEquals(List.of(), failures.first(20), failures.size() + " of " + (answered.get() + failures.size())
                    + " connections not answered, or not by an endpoint of the old or the new state, across " + syncs
                    + " changes of the count");
            assertTrue(syncs >= 400 && answered.get() >= 6_000, "enough of both: " + syncs + " changes, "
                    + answered.get() + " connections");
            assertTrue(byEndpoint.size() > 1, "answered by several endpoints: " + byEndpoint);
            assertTrue(!refused.isEmpty(), "some connections made while the service had no endpoint");
        }
    }

    /**
     * The most endpoints of the states in force from t0 to t1: the last in force before t0, those
     * that came during, and the first after t1 (its commit may have taken effect before t1).
     */
    static int most(ConcurrentSkipListMap<Long, Integer> inForce, long t0, long t1) {
        Long from = inForce.floorKey(t0);
        Long to = inForce.ceilingKey(t1);
        return inForce.subMap(from, true, to == null ? inForce.lastKey() : to, true).values().stream()
                .mapToInt(Integer::intValue).max().orElseThrow();
    }

    /** The fewest endpoints of the states in force from t0 to t1 (see {@link #most}). */
    static int least(ConcurrentSkipListMap<Long, Integer> inForce, long t0, long t1) {
        Long from = inForce.floorKey(t0);
        Long to = inForce.ceilingKey(t1);
        return inForce.subMap(from, true, to == null ? inForce.lastKey() : to, true).values().stream()
                .mapToInt(Integer::intValue).min().orElseThrow();
    }

    /** What went wrong, from several threads. */
    static final class Queue {
        private final ConcurrentLinkedQueue<String> all = new ConcurrentLinkedQueue<>();

        void add(String s) {
            all.add(s);
        }

        int size() {
            return all.size();
        }

        List<String> first(int n) {
            return all.stream().limit(n).toList();
        }
    }
}
