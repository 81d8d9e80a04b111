package io.nftproxy.proxy.kernel;

import io.nftproxy.sandbox.Netns;

import static io.nftproxy.sandbox.Sandbox.Outcome.Result.ANSWERED;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.REFUSED;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ClusterIP semantics with real packets: DNAT, random choice, masquerade, hairpin, reject, drop. */
class ClusterIpKernelTest {
    static Topology topo;
    static Netns client;
    static final String POD_CLIENT = "10.244.2.100";

    @BeforeAll
    static void setUp(@TempDir Path dir) throws Exception {
        topo = new Topology();
        for (String ep : new String[] {"10.244.1.2", "10.244.1.3"}) {
            topo.serve(ep, 8080);
            topo.serve(ep, 5353);
        }
        client = topo.pod(POD_CLIENT);
        new Manifests()
                .service("web", "10.96.0.10", "[{name: http, port: 80, protocol: TCP}, {name: dns, port: 53, protocol: UDP}]")
                .slice("web", "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}, {name: dns, port: 5353, protocol: UDP}]",
                        "10.244.1.2@node-a", "10.244.1.3@node-b")
                .service("empty", "10.96.0.11", "[{port: 80, protocol: TCP}, {name: dns, port: 53, protocol: UDP}]")
                .write(dir, "services.yaml");
        ProxyRun.once(topo, dir);
    }

    @AfterAll
    static void tearDown() {
        if (topo != null) {
            topo.close();
        }
    }

    @Test
    void nftListsWhatWeWrote() {
        // The operator's first tool must be able to read our tables.
        String listed = topo.node.exec("nft", "list", "table", "ip", "nftproxy");
        assertTrue(listed.contains("ip daddr . meta l4proto . th dport @ip-count-bit-0 dnat ip to ip daddr . meta l4proto . th dport"
                + " . numgen random mod 2 map @service-endpoints"), listed);
        assertTrue(listed.contains("ip daddr . meta l4proto . th dport @service-ips goto ip-pick-1-128"), listed);
        assertTrue(listed.contains("chain ip-pick-1-2 {"), "the last level tells 1 from 2 and draws: " + listed);
        assertTrue(listed.contains("set ip-count-bit-0 {") && listed.contains("10.96.0.10 . tcp . 80 comment \"default/web:http\""), listed);
        topo.node.exec("nft", "-j", "list", "ruleset");
    }

    @Test
    void podReachesEveryEndpointWithoutMasquerade() throws Exception {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 40; i++) {
            Topology.Outcome o = topo.tcp(client, POD_CLIENT, "10.96.0.10", 80);
            assertEquals(ANSWERED, o.result(), o.toString());
            assertEquals(POD_CLIENT, o.peerSeen(), "traffic from inside the cluster CIDR keeps its source");
            seen.add(o.answeredBy());
        }
        assertEquals(Set.of("10.244.1.2:8080", "10.244.1.3:8080"), seen);
    }

    @Test
    void externalClientIsMasqueraded() throws Exception {
        Topology.Outcome o = topo.tcp(topo.ext, null, "10.96.0.10", 80);
        assertEquals(ANSWERED, o.result(), o.toString());
        assertEquals(Topology.NODE_POD_GW, o.peerSeen(), "off-cluster traffic to a ClusterIP is masqueraded");
    }

    @Test
    void nodeItselfReachesTheService() throws Exception {
        Topology.Outcome o = topo.tcp(topo.node, null, "10.96.0.10", 80);
        assertEquals(ANSWERED, o.result(), o.toString());
    }

    @Test
    void hairpinIsMasqueraded() throws Exception {
        boolean self = false;
        boolean other = false;
        for (int i = 0; i < 60 && !(self && other); i++) {
            Topology.Outcome o = topo.tcp(topo.podOf("10.244.1.2"), "10.244.1.2", "10.96.0.10", 80);
            assertEquals(ANSWERED, o.result(), o.toString());
            if (o.answeredBy().equals("10.244.1.2:8080")) {
                self = true;
                assertEquals(Topology.NODE_POD_GW, o.peerSeen(), "an endpoint reaching itself is masqueraded");
            } else {
                other = true;
                assertEquals("10.244.1.2", o.peerSeen(), "reaching another endpoint keeps the source");
            }
        }
        assertTrue(self && other, "both paths were exercised");
    }

    @Test
    void udpIsBalancedToo() throws Exception {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            Topology.Outcome o = topo.udp(client, POD_CLIENT, "10.96.0.10", 53);
            assertEquals(ANSWERED, o.result(), o.toString());
            seen.add(o.answeredBy());
        }
        assertEquals(Set.of("10.244.1.2:5353", "10.244.1.3:5353"), seen);
    }

    @Test
    void serviceWithoutEndpointsRejects() throws Exception {
        assertEquals(REFUSED, topo.tcp(client, POD_CLIENT, "10.96.0.11", 80).result(), "from a pod");
        assertEquals(REFUSED, topo.tcp(topo.node, null, "10.96.0.11", 80).result(), "from the node");
        assertEquals(REFUSED, topo.tcp(topo.ext, null, "10.96.0.11", 80).result(), "from outside");
        assertEquals(REFUSED, topo.udp(client, POD_CLIENT, "10.96.0.11", 53).result(), "UDP: port unreachable");
    }

    @Test
    void unusedPortIsRejectedAndUnallocatedIpDropped() throws Exception {
        assertEquals(REFUSED, topo.tcp(client, POD_CLIENT, "10.96.0.10", 81).result(), "unused port of a ClusterIP");
        assertEquals(REFUSED, topo.tcp(topo.node, null, "10.96.0.10", 81).result(), "unused port, from the node");
        assertEquals(TIMEOUT, topo.tcp(client, POD_CLIENT, "10.96.5.5", 80).result(), "unallocated service IP");
    }
}
