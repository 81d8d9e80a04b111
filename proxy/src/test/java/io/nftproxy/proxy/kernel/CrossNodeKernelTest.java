package io.nftproxy.proxy.kernel;

import static io.nftproxy.sandbox.Sandbox.Outcome.Result.ANSWERED;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.nftproxy.sandbox.Clients;
import io.nftproxy.sandbox.Cluster;
import io.nftproxy.sandbox.Netns;
import io.nftproxy.sandbox.Sandbox.Outcome;
import io.nftproxy.testkit.Kernel;

/**
 * Three nodes, one proxy on each (as a DaemonSet runs them) reading the same manifests, endpoints
 * on other nodes than the traffic enters: what masquerading and the traffic policies mean only
 * across nodes, for both backends, with real packets. Each expectation names the Kubernetes e2e
 * test (test/e2e/network) whose behaviour it checks.
 */
class CrossNodeKernelTest {
    static final int A = 0;
    static final int B = 1;
    static final int C = 2;

    static void programEveryNode(Cluster c, Path dir, String mode) {
        for (int i = 0; i < Cluster.NODES.size(); i++) {
            ProxyRun.Result r = ProxyRun.cli(new ArrayList<>(List.of("run", "--mode", mode, "--manifests", dir.toString(),
                    "--netns", c.nodes.get(i).name(), "--once", "--hostname-override", Cluster.NODES.get(i),
                    "--node-ip", Cluster.nodeIp(i), "--cluster-cidr", "10.244.0.0/16", "--service-cidr", "10.96.0.0/16"))
                    .toArray(new String[0]));
            assertEquals(0, r.exit(), Cluster.NODES.get(i) + ": " + r.err());
        }
    }

    static String answer(Outcome o) {
        return o.result() == ANSWERED ? o.answeredBy() + " saw " + o.peerSeen() : o.result().toString();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"nftables", "iptables"})
    void servicesAcrossNodes(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-x")) {
            c.serve(B, "10.244.2.10", 8080);
            c.serve(B, "10.244.2.11", 8080);
            c.serve(B, "10.244.2.12", 8080);
            Netns podA = c.pod(A, "10.244.1.100");
            Netns podB = c.pod(B, "10.244.2.100");
            String http = "[{name: http, port: 8080, protocol: TCP}]";
            new Manifests()
                    .service("web", "10.96.0.10", "[{name: http, port: 80, targetPort: 8080, nodePort: 30080}]", "type: NodePort")
                    .slice("web", "a", "IPv4", http, "10.244.2.10@node-b")
                    .service("local", "10.96.0.11", "[{name: http, port: 80, targetPort: 8080, nodePort: 30081}]", "type: NodePort",
                            "externalTrafficPolicy: Local")
                    .slice("local", "a", "IPv4", http, "10.244.2.11@node-b")
                    .service("itp", "10.96.0.12", "[{name: http, port: 80, targetPort: 8080}]", "internalTrafficPolicy: Local")
                    .slice("itp", "a", "IPv4", http, "10.244.2.12@node-b")
                    .write(dir, "services.yaml");
            programEveryNode(c, dir, mode);

            // networking.go "should function for pod-Service: http": a pod reaches an endpoint on
            // another node through the ClusterIP, and the endpoint sees the pod (no masquerade).
            assertEquals("10.244.2.10:8080 saw 10.244.1.100", answer(Clients.tcp(podA, null, "10.96.0.10", 80)));

            // service.go "should be able to create a functioning NodePort service": every node's
            // NodePort reaches the endpoint; traffic from outside is masqueraded by the node it
            // entered (kube-proxy's Cluster policy), so the reply goes back through that node: to
            // the address the packet leaves by, the node's own on the segment, or its pod gateway
            // when the endpoint is on that node.
            for (int n : new int[] {A, B, C}) {
                String masqueradedTo = n == B ? "10.244.2.1" : Cluster.nodeIp(n);
                assertEquals("10.244.2.10:8080 saw " + masqueradedTo, answer(Clients.tcp(c.ext, null, Cluster.nodeIp(n), 30080)),
                        "NodePort on " + Cluster.NODES.get(n));
            }

            // loadbalancer.go (ESIPP) "should work for type=NodePort" and "should only target nodes
            // with endpoints": externalTrafficPolicy Local keeps the client's address on the node
            // with an endpoint, and the nodes without one drop the traffic.
            assertEquals("10.244.2.11:8080 saw " + Cluster.EXT_IP, answer(Clients.tcp(c.ext, null, Cluster.nodeIp(B), 30081)));
            assertEquals(TIMEOUT, Clients.tcp(c.ext, null, Cluster.nodeIp(A), 30081).result(), "node-a has no endpoint of it");
            assertEquals(TIMEOUT, Clients.tcp(c.ext, null, Cluster.nodeIp(C), 30081).result(), "node-c has no endpoint of it");

            // service.go "should respect internalTrafficPolicy=Local Pod to Pod": a pod reaches the
            // service only through an endpoint on its own node; on a node without one it is dropped.
            assertEquals("10.244.2.12:8080 saw 10.244.2.100", answer(Clients.tcp(podB, null, "10.96.0.12", 80)));
            assertEquals(TIMEOUT, Clients.tcp(podA, null, "10.96.0.12", 80).result(), "no endpoint on node-a");
        }
    }
}
