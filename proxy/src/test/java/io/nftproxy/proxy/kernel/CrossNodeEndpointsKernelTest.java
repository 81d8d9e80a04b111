package io.nftproxy.proxy.kernel;

import static io.nftproxy.proxy.kernel.CrossNodeKernelTest.A;
import static io.nftproxy.proxy.kernel.CrossNodeKernelTest.B;
import static io.nftproxy.proxy.kernel.CrossNodeKernelTest.C;
import static io.nftproxy.proxy.kernel.CrossNodeKernelTest.answer;
import static io.nftproxy.proxy.kernel.CrossNodeKernelTest.answers;
import static io.nftproxy.proxy.kernel.CrossNodeKernelTest.programEveryNode;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.REFUSED;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.proxy.apiserver.NodeProcess;
import io.nftproxy.proxy.kernel.CrossNodeKernelTest.BothBackends;
import io.nftproxy.sandbox.Clients;
import io.nftproxy.sandbox.Cluster;
import io.nftproxy.sandbox.Netns;
import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.sandbox.Sandbox.Outcome;
import io.nftproxy.testkit.Kernel;

/**
 * Across three nodes, as {@link CrossNodeKernelTest}: who the client is (a node, an endpoint of
 * the service itself), services without endpoints, endpoints that are terminating, and the
 * conntrack setting kube-proxy makes on its node. Each test names the Kubernetes e2e tests it
 * ports; {@link E2eTable} reports them.
 */
@ExtendWith(E2eTable.class)
class CrossNodeEndpointsKernelTest {
    static final String PORTS = "[{name: http, port: 80, targetPort: 8080, nodePort: 30070},"
            + " {name: dns, port: 80, targetPort: 8080, nodePort: 30070, protocol: UDP}]";
    static final String SLICE_PORTS = "[{name: http, port: 8080, protocol: TCP}, {name: dns, port: 8080, protocol: UDP}]";

    /** Who answered {@code tries} UDP requests from {@code from}, each from a port of its own (a flow each). */
    static Set<String> udpAnswers(Netns from, String dst, int port, int tries) throws Exception {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < tries; i++) {
            seen.add(String.valueOf(Clients.udp(from, null, 0, dst, port).answeredBy()));
        }
        return seen;
    }

    @E2e({"networking.go: should function for node-Service: http",
            "networking.go: should function for node-Service: udp",
            "networking.go: should function for endpoint-Service: http",
            "networking.go: should function for endpoint-Service: udp",
            "service.go: should be rejected when no endpoints exist"})
    @BothBackends
    void nodesAndEndpointsAsClientsAndServicesWithoutEndpoints(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-x")) {
            c.serve(B, "10.244.2.70", 8080);
            c.serve(C, "10.244.3.70", 8080);
            Netns podA = c.pod(A, "10.244.1.170");
            new Manifests().service("web", "10.96.0.70", PORTS, "type: NodePort")
                    .slice("web", "a", "IPv4", SLICE_PORTS, "10.244.2.70@node-b", "10.244.3.70@node-c")
                    .service("none", "10.96.0.71", "[{name: http, port: 80, targetPort: 8080, nodePort: 30071}]", "type: NodePort")
                    .write(dir, "services.yaml");
            programEveryNode(c, dir, mode);
            Netns nodeA = c.nodes.get(A);
            Set<String> both = Set.of("10.244.2.70:8080", "10.244.3.70:8080");

            // node-Service: from node-a's own network, to the ClusterIP and to NodePorts, TCP and UDP.
            // Traffic from a node is masqueraded (its source is outside the cluster CIDR) to the
            // address it leaves by: node-a's own, towards either endpoint.
            assertEquals(Set.of("10.244.2.70:8080 saw 192.168.60.2", "10.244.3.70:8080 saw 192.168.60.2"),
                    answers(nodeA, "10.96.0.70", 80, 20, CrossNodeKernelTest::answer), "node-a to the ClusterIP");
            assertEquals(Set.of("10.244.2.70:8080 saw 192.168.60.2", "10.244.3.70:8080 saw 192.168.60.2"),
                    answers(nodeA, Cluster.nodeIp(A), 30070, 20, CrossNodeKernelTest::answer), "node-a to its own NodePort");
            // node-b masquerades to its pod gateway towards its own endpoint, to its address on the segment towards node-c's.
            assertEquals(Set.of("10.244.2.70:8080 saw 10.244.2.1", "10.244.3.70:8080 saw " + Cluster.nodeIp(B)),
                    answers(nodeA, Cluster.nodeIp(B), 30070, 20, CrossNodeKernelTest::answer), "node-a to node-b's NodePort");
            assertEquals(both, udpAnswers(nodeA, "10.96.0.70", 80, 20), "node-a to the ClusterIP, UDP");
            assertEquals(both, udpAnswers(nodeA, Cluster.nodeIp(C), 30070, 20), "node-a to node-c's NodePort, UDP");

            // endpoint-Service: an endpoint reaches its own service; when it lands on itself (hairpin)
            // it is masqueraded to its node's pod gateway, else the other endpoint sees it.
            Netns endpointB = c.podOf("10.244.2.70");
            assertEquals(Set.of("10.244.2.70:8080 saw 10.244.2.1", "10.244.3.70:8080 saw 10.244.2.70"),
                    answers(endpointB, "10.96.0.70", 80, 20, CrossNodeKernelTest::answer), "an endpoint to its own service");
            assertEquals(both, udpAnswers(endpointB, "10.96.0.70", 80, 20), "an endpoint to its own service, UDP");

            // service.go "should be rejected when no endpoints exist": refused at once, from a pod,
            // from a node and from outside through any node's NodePort.
            assertEquals(REFUSED, Clients.tcp(podA, null, "10.96.0.71", 80).result(), "a pod to the ClusterIP");
            assertEquals(REFUSED, Clients.tcp(c.nodes.get(B), null, "10.96.0.71", 80).result(), "node-b to the ClusterIP");
            for (int n : new int[] {A, B, C}) {
                assertEquals(REFUSED, Clients.tcp(c.ext, null, Cluster.nodeIp(n), 30071).result(), "NodePort of " + Cluster.NODES.get(n));
            }
        }
    }

    @E2e({"service.go: should fallback to terminating endpoints when there are no ready endpoints with internalTrafficPolicy=Cluster",
            "service.go: should fallback to local terminating endpoints when there are no ready endpoints with internalTrafficPolicy=Local",
            "service.go: should fallback to terminating endpoints when there are no ready endpoints with externalTrafficPolicy=Cluster",
            "service.go: should fallback to local terminating endpoints when there are no ready endpoints with externalTrafficPolicy=Local"})
    @BothBackends
    void terminatingEndpointsServeWhenNoneIsReady(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-x")) {
            for (String ip : List.of("10.244.2.80", "10.244.2.81", "10.244.2.82")) {
                c.serve(B, ip, 8080);
            }
            for (String ip : List.of("10.244.3.80", "10.244.3.81", "10.244.3.82")) {
                c.serve(C, ip, 8080);
            }
            Netns podA = c.pod(A, "10.244.1.180");
            Netns podB = c.pod(B, "10.244.2.180");
            String http = "[{name: http, port: 8080, protocol: TCP}]";
            String terminating = "[ready=false,serving=true,terminating=true]";
            new Manifests()
                    // Policy Cluster: no endpoint is ready; the serving one is used, the one that stopped serving never.
                    .service("cluster", "10.96.0.80", "[{name: http, port: 80, targetPort: 8080, nodePort: 30080}]", "type: NodePort")
                    .slice("cluster", "a", "IPv4", http, "10.244.2.80@node-b" + terminating,
                            "10.244.3.80@node-c[ready=false,serving=false,terminating=true]")
                    // internalTrafficPolicy Local: a node's own terminating endpoint before another node's ready one.
                    .service("itp", "10.96.0.81", "[{name: http, port: 80, targetPort: 8080}]", "internalTrafficPolicy: Local")
                    .slice("itp", "a", "IPv4", http, "10.244.2.81@node-b" + terminating, "10.244.3.81@node-c")
                    // externalTrafficPolicy Local: likewise for traffic from outside, through each node.
                    .service("etp", "10.96.0.82", "[{name: http, port: 80, targetPort: 8080, nodePort: 30082}]", "type: NodePort",
                            "externalTrafficPolicy: Local")
                    .slice("etp", "a", "IPv4", http, "10.244.2.82@node-b" + terminating, "10.244.3.82@node-c")
                    .write(dir, "services.yaml");
            programEveryNode(c, dir, mode);

            assertEquals(Set.of("10.244.2.80:8080 saw 10.244.1.180"), answers(podA, "10.96.0.80", 80, 20, CrossNodeKernelTest::answer),
                    "Cluster: the serving terminating endpoint only");
            assertEquals(Set.of("10.244.2.80:8080 saw " + Cluster.nodeIp(C)),
                    answers(c.ext, Cluster.nodeIp(C), 30080, 10, CrossNodeKernelTest::answer), "Cluster, from outside via node-c");

            assertEquals(Set.of("10.244.2.81:8080 saw 10.244.2.180"), answers(podB, "10.96.0.81", 80, 20, CrossNodeKernelTest::answer),
                    "iTP Local on node-b: its own terminating endpoint, not node-c's ready one");
            assertEquals(TIMEOUT, Clients.tcp(podA, null, "10.96.0.81", 80).result(), "iTP Local on node-a: no endpoint there");

            assertEquals("10.244.2.82:8080 saw " + Cluster.EXT_IP, answer(Clients.tcp(c.ext, null, Cluster.nodeIp(B), 30082)),
                    "eTP Local via node-b: its terminating endpoint, the client's address kept");
            assertEquals("10.244.3.82:8080 saw " + Cluster.EXT_IP, answer(Clients.tcp(c.ext, null, Cluster.nodeIp(C), 30082)),
                    "eTP Local via node-c: its ready endpoint");
            assertEquals(TIMEOUT, Clients.tcp(c.ext, null, Cluster.nodeIp(A), 30082).result(), "eTP Local via node-a: none there");
        }
    }

    /**
     * networking.go "should update endpoints" and "should update nodePort": an endpoint deleted
     * is no longer reached from any node; a NodePort changed answers at its new number on every
     * node and is refused at the old one (nothing listens there, as on a node without the service).
     */
    @E2e({"networking.go: should update endpoints: http", "networking.go: should update nodePort: http"})
    @BothBackends
    void endpointsAndNodePortsChanged(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-x")) {
            c.serve(B, "10.244.2.75", 8080);
            c.serve(C, "10.244.3.75", 8080);
            Netns podA = c.pod(A, "10.244.1.175");
            String http = "[{name: http, port: 8080, protocol: TCP}]";
            new Manifests().service("web", "10.96.0.75", "[{name: http, port: 80, targetPort: 8080, nodePort: 30075}]", "type: NodePort")
                    .slice("web", "a", "IPv4", http, "10.244.2.75@node-b", "10.244.3.75@node-c").write(dir, "services.yaml");
            programEveryNode(c, dir, mode);
            Set<String> both = Set.of("10.244.2.75:8080", "10.244.3.75:8080");
            assertEquals(both, answers(podA, "10.96.0.75", 80, 20, Outcome::answeredBy));
            assertEquals(both, answers(c.ext, Cluster.nodeIp(C), 30075, 20, Outcome::answeredBy));

            new Manifests().service("web", "10.96.0.75", "[{name: http, port: 80, targetPort: 8080, nodePort: 30076}]", "type: NodePort")
                    .slice("web", "a", "IPv4", http, "10.244.3.75@node-c").write(dir, "services.yaml");
            programEveryNode(c, dir, mode);
            assertEquals(Set.of("10.244.3.75:8080"), answers(podA, "10.96.0.75", 80, 20, Outcome::answeredBy), "node-b's endpoint gone");
            for (int n : new int[] {A, B, C}) {
                assertEquals(Set.of("10.244.3.75:8080"), answers(c.ext, Cluster.nodeIp(n), 30076, 5, Outcome::answeredBy),
                        "the new NodePort on " + Cluster.NODES.get(n));
                assertEquals(REFUSED, Clients.tcp(c.ext, null, Cluster.nodeIp(n), 30075).result(),
                        "the old NodePort on " + Cluster.NODES.get(n));
            }
        }
    }

    /**
     * kube_proxy.go "should set TCP CLOSE_WAIT timeout": kube-proxy sets conntrack's close-wait
     * timeout to an hour on its node (the kernel's default is a minute). A pod on node-a
     * connects through the ClusterIP to an endpoint on node-b, which closes its side; while the
     * pod keeps its own open, node-a's conntrack entry is in CLOSE_WAIT with up to an hour to live.
     * The setting is made by the privileged start-up ({@code --init-only}) run in node-a's network.
     */
    @E2e({"kube_proxy.go: should set TCP CLOSE_WAIT timeout [Privileged]"})
    @BothBackends
    void conntrackKeepsCloseWaitConnectionsForAnHour(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-x")) {
            c.serve(B, "10.244.2.95", 8080);
            Netns podA = c.pod(A, "10.244.1.195");
            new Manifests().service("web", "10.96.0.95", "[{name: http, port: 80, targetPort: 8080}]")
                    .slice("web", "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}]", "10.244.2.95@node-b")
                    .write(dir, "services.yaml");
            programEveryNode(c, dir, mode);
            Netns nodeA = c.nodes.get(A);
            List<String> init = new ArrayList<>(List.of("ip", "netns", "exec", nodeA.name()));
            init.addAll(NodeProcess.command(List.of("kube-proxy", "--init-only", "--proxy-mode=" + mode,
                    "--hostname-override=node-a")));
            Netns.run(init, null);
            assertEquals("3600", nodeA.exec("sysctl", "-n", "net.netfilter.nf_conntrack_tcp_timeout_close_wait").trim());

            try (Socket s = podA.ns().call(() -> {
                Socket k = new Socket();
                k.connect(new InetSocketAddress("10.96.0.95", 80), 2000);
                k.setSoTimeout(3000);
                InputStream in = k.getInputStream();
                while (in.read() >= 0) {
                    // the endpoint's line, then its FIN: this side stays open, in CLOSE_WAIT
                }
                return k;
            })) {
                assertTrue(s.isConnected());
                Pattern entry = Pattern.compile("^tcp\\s+6\\s+(\\d+)\\s+CLOSE_WAIT\\s.*dst=10\\.96\\.0\\.95", Pattern.MULTILINE);
                long[] ttl = {-1};
                Sandbox.eventually(Duration.ofSeconds(10), () -> {
                    Matcher m = entry.matcher(nodeA.exec("conntrack", "-L", "-p", "tcp"));
                    ttl[0] = m.find() ? Long.parseLong(m.group(1)) : -1;
                    return ttl[0] >= 0;
                }, "a CLOSE_WAIT entry on node-a");
                assertTrue(ttl[0] > 3600 - 15 && ttl[0] <= 3600, "its timeout: " + ttl[0] + " s");
            }
        }
    }
}
