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


/**
 * NodePort, LoadBalancer and externalIPs with both external traffic policies, internal traffic
 * policy Local, load-balancer source ranges and services without endpoints, with real packets.
 */
class ExternalTrafficKernelTest {
    static Topology topo;
    static Netns client;
    static final String POD_CLIENT = "10.244.2.100";

    @BeforeAll
    static void setUp(@TempDir Path dir) throws Exception {
        topo = new Topology();
        for (String ep : new String[] {"10.244.1.2", "10.244.1.3", "10.244.1.4", "10.244.1.5", "10.244.1.6",
            "10.244.1.7", "10.244.1.8", "10.244.1.9"}) {
            topo.serve(ep, 8080);
        }
        client = topo.pod(POD_CLIENT);
        String http = "[{name: http, port: 8080, protocol: TCP}]";
        new Manifests()
                // eTP Cluster NodePort
                .service("np-cluster", "10.96.0.20", "[{name: http, port: 80, nodePort: 30080}]", "type: NodePort")
                .slice("np-cluster", "a", "IPv4", http, "10.244.1.2@node-a", "10.244.1.3@node-b")
                // eTP Local NodePort, one local endpoint and one remote
                .service("np-local", "10.96.0.21", "[{name: http, port: 80, nodePort: 30081}]", "type: NodePort",
                        "externalTrafficPolicy: Local", "healthCheckNodePort: 32000")
                .slice("np-local", "a", "IPv4", http, "10.244.1.4@node-a", "10.244.1.5@node-b")
                // eTP Local with no endpoint on this node
                .service("np-remote", "10.96.0.22", "[{name: http, port: 80, nodePort: 30082}]", "type: NodePort",
                        "externalTrafficPolicy: Local")
                .slice("np-remote", "a", "IPv4", http, "10.244.1.6@node-b")
                // iTP Local: with and without a local endpoint
                .service("itp-local", "10.96.0.23", "[{name: http, port: 80}]", "internalTrafficPolicy: Local")
                .slice("itp-local", "a", "IPv4", http, "10.244.1.7@node-a", "10.244.1.8@node-b")
                .service("itp-none", "10.96.0.24", "[{name: http, port: 80}]", "internalTrafficPolicy: Local")
                .slice("itp-none", "a", "IPv4", http, "10.244.1.9@node-b")
                // NodePort without endpoints
                .service("np-empty", "10.96.0.25", "[{name: http, port: 80, nodePort: 30085}]", "type: NodePort")
                // LoadBalancer: one allowing the external network, one allowing only 10.0.0.0/8
                .raw(lb("lb-open", "10.96.0.26", "203.0.113.10", 30086, "192.168.50.0/28"))
                .slice("lb-open", "a", "IPv4", http, "10.244.1.2@node-a")
                .raw(lb("lb-closed", "10.96.0.27", "203.0.113.11", 30087, "10.0.0.0/8"))
                .slice("lb-closed", "a", "IPv4", http, "10.244.1.3@node-a")
                // externalIPs
                .service("ext-ip", "10.96.0.28", "[{name: http, port: 80}]", "externalIPs: [203.0.113.20]")
                .slice("ext-ip", "a", "IPv4", http, "10.244.1.2@node-a")
                .write(dir, "services.yaml");
        ProxyRun.once(topo, dir);
    }

    static String lb(String name, String clusterIP, String lbIP, int nodePort, String range) {
        return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + ", namespace: default}\n"
                + "spec:\n  type: LoadBalancer\n  clusterIP: " + clusterIP + "\n  clusterIPs: [" + clusterIP + "]\n"
                + "  ports: [{name: http, port: 80, nodePort: " + nodePort + "}]\n"
                + "  loadBalancerSourceRanges: [" + range + "]\n"
                + "status:\n  loadBalancer:\n    ingress: [{ip: " + lbIP + "}]\n";
    }

    @AfterAll
    static void tearDown() {
        if (topo != null) {
            topo.close();
        }
    }

    private static Set<String> answers(Netns from, String src, String dst, int port, int n) throws Exception {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < n; i++) {
            Topology.Outcome o = topo.tcp(from, src, dst, port);
            assertEquals(ANSWERED, o.result(), dst + ":" + port + " " + o);
            seen.add(o.answeredBy() + " saw " + o.peerSeen());
        }
        return seen;
    }

    @Test
    void nodePortWithClusterPolicyReachesAllEndpointsMasqueraded() throws Exception {
        assertEquals(Set.of("10.244.1.2:8080 saw 10.244.0.1", "10.244.1.3:8080 saw 10.244.0.1"),
                answers(topo.ext, null, Topology.NODE_IP, 30080, 30));
    }

    @Test
    void nodePortWithLocalPolicyReachesOnlyLocalEndpointsAndKeepsTheSource() throws Exception {
        assertEquals(Set.of("10.244.1.4:8080 saw " + Topology.EXT_IP), answers(topo.ext, null, Topology.NODE_IP, 30081, 15));
    }

    @Test
    void localPolicyWithoutLocalEndpointsDropsExternalTrafficButNotPodsOrTheNode() throws Exception {
        assertEquals(TIMEOUT, topo.tcp(topo.ext, null, Topology.NODE_IP, 30082).result(), "external: dropped");
        assertEquals(Set.of("10.244.1.6:8080 saw " + POD_CLIENT), answers(client, POD_CLIENT, Topology.NODE_IP, 30082, 3),
                "pods short-circuit to the cluster-wide endpoints");
        Topology.Outcome fromNode = topo.tcp(topo.node, null, Topology.NODE_IP, 30082);
        assertEquals(ANSWERED, fromNode.result(), "the node itself short-circuits too");
        assertEquals("10.244.1.6:8080", fromNode.answeredBy());
    }

    @Test
    void internalPolicyLocal() throws Exception {
        assertEquals(Set.of("10.244.1.7:8080 saw " + POD_CLIENT), answers(client, POD_CLIENT, "10.96.0.23", 80, 15));
        assertEquals(TIMEOUT, topo.tcp(client, POD_CLIENT, "10.96.0.24", 80).result(), "no local endpoint: dropped");
    }

    @Test
    void nodePortWithoutEndpointsRejects() throws Exception {
        assertEquals(REFUSED, topo.tcp(topo.ext, null, Topology.NODE_IP, 30085).result());
        assertEquals(REFUSED, topo.tcp(client, POD_CLIENT, "10.96.0.25", 80).result());
    }

    @Test
    void loadBalancerSourceRanges() throws Exception {
        assertEquals(Set.of("10.244.1.2:8080 saw 10.244.0.1"), answers(topo.ext, null, "203.0.113.10", 80, 3),
                "a source inside loadBalancerSourceRanges passes");
        assertEquals(TIMEOUT, topo.tcp(topo.ext, null, "203.0.113.11", 80).result(), "a source outside is dropped");
        assertEquals(ANSWERED, topo.tcp(topo.ext, null, Topology.NODE_IP, 30087).result(),
                "the NodePort of the same service is not filtered");
    }

    @Test
    void externalIPs() throws Exception {
        assertEquals(Set.of("10.244.1.2:8080 saw 10.244.0.1"), answers(topo.ext, null, "203.0.113.20", 80, 3));
        assertTrue(topo.tcp(topo.ext, null, "203.0.113.20", 81).result() != ANSWERED, "only the service port");
    }
}
