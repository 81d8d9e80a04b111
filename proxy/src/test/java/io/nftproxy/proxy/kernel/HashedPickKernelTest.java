package io.nftproxy.proxy.kernel;

import static io.nftproxy.sandbox.Sandbox.Outcome.Result.ANSWERED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.model.LbAlgorithm;
import io.nftproxy.sandbox.Clients;
import io.nftproxy.sandbox.Cluster;
import io.nftproxy.sandbox.Netns;
import io.nftproxy.sandbox.Sandbox.Outcome;
import io.nftproxy.testkit.Kernel;

/**
 * The hashed picks ({@value LbAlgorithm#ANNOTATION}: maglev, source-hash) with real packets, on
 * three nodes each programmed by its own proxy from the same manifests, as a DaemonSet runs them:
 * one client's connections, each from its own source port, spread evenly over ten endpoints;
 * every node sends a connection of the same client and source port to the same endpoint; and the
 * same connections to the same service with one endpoint fewer move the leaving endpoint's share
 * and few others (Maglev's promise). One client address hashed alone (source-hash) reaches one
 * endpoint through every node; ClientIP affinity on top of Maglev keeps a client on one endpoint.
 *
 * <p>Every connection is new to the endpoint that answers it: a run through another node reaches
 * the endpoints from that node's address (masqueraded), so no server meets a 4-tuple it holds in
 * TIME_WAIT. The hash is a fixed function of the client's address and port, so the figures are
 * the same at every run.
 */
class HashedPickKernelTest {
    static final int A = 0;
    static final int B = 1;
    static final int C = 2;
    /** Source ports of the external client's connections, one connection each per run. */
    static final int FIRST_PORT = 20_000;
    static final int CONNECTIONS = 1_000;
    /** χ² for 9 degrees of freedom at p = 0.001: a uniform pick exceeds it once in a thousand draws. */
    static final double CHI2_9_P001 = 27.877;

    /** Which endpoint answered the connection from each source port, through node {@code node} to NodePort {@code port}. */
    static Map<Integer, String> choices(Cluster c, int node, int port, int first, int count) throws Exception {
        Map<Integer, String> out = new TreeMap<>();
        for (int p = first; p < first + count; p++) {
            Outcome o = Clients.tcp(c.ext, Cluster.EXT_IP, p, Cluster.nodeIp(node), port);
            assertEquals(ANSWERED, o.result(), "source port " + p + " through " + Cluster.NODES.get(node) + ": " + o);
            out.put(p, o.answeredBy());
        }
        return out;
    }

    static double chiSquared(Map<Integer, String> choices, int endpoints) {
        Map<String, Integer> counts = new TreeMap<>();
        choices.values().forEach(e -> counts.merge(e, 1, Integer::sum));
        assertEquals(endpoints, counts.size(), "every endpoint chosen: " + counts);
        double expected = (double) choices.size() / endpoints;
        double chi2 = 0;
        for (int n : counts.values()) {
            chi2 += (n - expected) * (n - expected) / expected;
        }
        return chi2;
    }

    @Test
    void hashedPicksSpreadEvenlyAgreeAcrossNodesAndMoveLittle(@TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-h")) {
            List<String> ten = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                c.serve(B, "10.244.2." + (20 + i), 8080);
                c.serve(C, "10.244.3." + (20 + i), 8080);
                ten.add("10.244.2." + (20 + i) + "@node-b");
                ten.add("10.244.3." + (20 + i) + "@node-c");
            }
            List<String> nine = ten.subList(1, 10); // 10.244.2.20 goes
            Netns pod = c.pod(A, "10.244.1.100");
            String http = "[{name: http, port: 8080, protocol: TCP}]";
            new Manifests()
                    .service("maglev", "10.96.0.40", "[{name: http, port: 80, targetPort: 8080, nodePort: 30140}]", "type: NodePort")
                    .annotated(LbAlgorithm.ANNOTATION, "maglev")
                    .slice("maglev", "a", "IPv4", http, ten.toArray(new String[0]))
                    .service("maglev-nine", "10.96.0.42", "[{name: http, port: 80, targetPort: 8080, nodePort: 30142}]", "type: NodePort")
                    .annotated(LbAlgorithm.ANNOTATION, "maglev")
                    .slice("maglev-nine", "a", "IPv4", http, nine.toArray(new String[0]))
                    .service("by-source", "10.96.0.41", "[{name: http, port: 80, targetPort: 8080, nodePort: 30141}]", "type: NodePort")
                    .annotated(LbAlgorithm.ANNOTATION, "source-hash")
                    .slice("by-source", "a", "IPv4", http, ten.toArray(new String[0]))
                    .service("sticky", "10.96.0.43", "[{name: http, port: 80, targetPort: 8080, nodePort: 30143}]", "type: NodePort",
                            "sessionAffinity: ClientIP", "sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}")
                    .annotated(LbAlgorithm.ANNOTATION, "maglev")
                    .slice("sticky", "a", "IPv4", http, ten.toArray(new String[0]))
                    .service("typo", "10.96.0.44", "[{name: http, port: 80, targetPort: 8080}]")
                    .annotated(LbAlgorithm.ANNOTATION, "round-robin")
                    .slice("typo", "a", "IPv4", http, ten.toArray(new String[0]))
                    .write(dir, "services.yaml");
            CrossNodeKernelTest.programEveryNode(c, dir, "nftables");
            try (NftClient nft = NftClient.open(c.nodes.get(A).ns())) {
                String table = nft.readTable(Family.IP, "nftproxy").toString();
                assertTrue(table.contains("jhash ip saddr . th sport mod 1601 seed 0x6e667470 map @nodeport-maglev-slots-1601"),
                        "the NodePorts' hashed pick: " + table.lines().filter(l -> l.contains("jhash")).toList());
            }

            // nft, an independent reader, lists the chain as ours reads it.
            String listed = c.nodes.get(A).exec("nft", "list", "chain", "ip", "nftproxy", "nodeport-maglev-1601");
            assertTrue(listed.contains("dnat ip to meta l4proto . th dport . jhash ip saddr . th sport mod 1601 seed 0x6e667470"
                    + " map @nodeport-maglev-slots-1601"), listed);

            // What the kernel does for it, read back from the kernel alone.
            String dump = ProxyRun.cli("dump", "--service", "default/maglev", "--netns", c.nodes.get(A).name()).out();
            assertEquals(2, dump.lines().filter(l -> l.contains("lb-algorithm maglev: 10 endpoints over a table of 1601 slots:")
                    && l.contains("10.244.2.20:8080 16")).count(), "the ClusterIP and the NodePort:\n" + dump);

            // One client, a thousand source ports, through node-a: every endpoint a tenth, give or take chance.
            Map<Integer, String> viaA = choices(c, A, 30140, FIRST_PORT, CONNECTIONS);
            double chi2 = chiSquared(viaA, 10);
            assertTrue(chi2 < CHI2_9_P001, "even over ten endpoints: χ² " + chi2);

            // The same connections through node-b: the same endpoint each (the tables and the seed are the cluster's).
            Map<Integer, String> viaB = choices(c, B, 30140, FIRST_PORT, CONNECTIONS);
            assertEquals(viaA, viaB, "node-b chooses as node-a");

            // The same service with one endpoint fewer, through node-c: the leaving endpoint's share moves, and few others.
            Map<Integer, String> withNine = choices(c, C, 30142, FIRST_PORT, CONNECTIONS);
            int ownMoved = 0;
            int othersMoved = 0;
            for (int p : viaA.keySet()) {
                if (viaA.get(p).equals("10.244.2.20:8080")) {
                    ownMoved++;
                } else if (!viaA.get(p).equals(withNine.get(p))) {
                    othersMoved++;
                }
            }
            double moved = (double) (ownMoved + othersMoved) / CONNECTIONS;
            System.out.printf("hashed picks: %d connections over ten endpoints, χ² %.2f; one of ten leaving moves %d of its own"
                    + " and %d others%n", CONNECTIONS, chi2, ownMoved, othersMoved);
            assertTrue(moved <= 0.12 && othersMoved <= 0.02 * CONNECTIONS, "one endpoint of ten leaving (or joining) moves "
                    + ownMoved + " connections of its own and " + othersMoved + " others of " + CONNECTIONS + ": " + moved);

            // source-hash: the client's address alone, so every connection of it reaches one endpoint, through any node.
            Set<String> bySource = new HashSet<>();
            for (int n : new int[] {A, B, C}) {
                bySource.addAll(choices(c, n, 30141, 21_000, 20).values());
            }
            assertEquals(1, bySource.size(), "one client, one endpoint: " + bySource);

            // ClientIP affinity on a Maglev service: the client stays where its first connection went.
            Set<String> sticky = new HashSet<>(choices(c, A, 30143, 22_000, 30).values());
            assertEquals(1, sticky.size(), "remembered, whatever its source port hashes to: " + sticky);

            // A pod's connections to the ClusterIP are hashed too; an annotation that names no algorithm picks at random.
            Set<String> fromPod = new HashSet<>();
            Set<String> typo = new HashSet<>();
            for (int p = 23_000; p < 23_100; p++) {
                Outcome o = Clients.tcp(pod, "10.244.1.100", p, "10.96.0.40", 80);
                assertEquals(ANSWERED, o.result(), o.toString());
                fromPod.add(o.answeredBy());
                Outcome t = Clients.tcp(pod, "10.244.1.100", p, "10.96.0.44", 80);
                assertEquals(ANSWERED, t.result(), t.toString());
                typo.add(t.answeredBy());
            }
            assertTrue(fromPod.size() >= 8 && typo.size() >= 8, "spread: " + fromPod + " / " + typo);
        }
    }

    /**
     * IPv6, the widest registers the hash uses (a 16-byte address in the key and in the hash's
     * input): two Services with the same three endpoints hash a client's source port alike, so
     * each connection's twin, to the other Service, reaches the same endpoint.
     */
    @Test
    void overIpv6TwoServicesOfTheSameEndpointsHashAClientAlike(@TempDir Path dir) throws Exception {
        Kernel.require();
        try (Topology topo = new Topology()) {
            List<String> eps = List.of("fd00:244::61", "fd00:244::62", "fd00:244::63");
            topo.pod(eps.toArray(new String[0]));
            for (String ep : eps) {
                topo.serve(ep, 8080);
            }
            Netns client = topo.pod("fd00:244::100");
            String http = "[{name: http, port: 8080, protocol: TCP}]";
            String[] slice = eps.stream().map(e -> e + "@node-b").toArray(String[]::new);
            new Manifests()
                    .service("a", "fd00:96::61", "[{name: http, port: 80, targetPort: 8080}]", "ipFamilies: [IPv6]")
                    .annotated(LbAlgorithm.ANNOTATION, "maglev")
                    .slice("a", "v6", "IPv6", http, slice)
                    .service("b", "fd00:96::62", "[{name: http, port: 80, targetPort: 8080}]", "ipFamilies: [IPv6]")
                    .annotated(LbAlgorithm.ANNOTATION, "maglev")
                    .slice("b", "v6", "IPv6", http, slice)
                    .write(dir, "services.yaml");
            ProxyRun.once(topo, dir);
            Map<String, Integer> spread = new TreeMap<>();
            for (int p = 24_000; p < 24_090; p++) {
                Outcome a = topo.tcp(client, "fd00:244::100", p, "fd00:96::61", 80);
                Outcome b = topo.tcp(client, "fd00:244::100", p, "fd00:96::62", 80);
                assertEquals(ANSWERED, a.result(), a.toString());
                assertEquals(a.answeredBy(), b.answeredBy(), "source port " + p + ": the same slot, the same endpoint");
                spread.merge(a.answeredBy(), 1, Integer::sum);
            }
            assertEquals(3, spread.size(), "every endpoint has clients: " + spread);
        }
    }
}
