package io.nftproxy.proxy.kernel;

import static io.nftproxy.sandbox.Sandbox.Outcome.Result.ANSWERED;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.events.EventRecorder;
import io.nftproxy.proxy.iptables.IptablesSyncer;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.server.ProxyServer;
import io.nftproxy.proxy.source.ManifestSource;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.sandbox.Clients;
import io.nftproxy.sandbox.Cluster;
import io.nftproxy.sandbox.Netns;
import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.sandbox.Sandbox.Outcome;
import io.nftproxy.testkit.Kernel;

/**
 * Three nodes, one proxy on each (as a DaemonSet runs them) reading the same manifests, endpoints
 * on other nodes than the traffic enters: what masquerading and the traffic policies mean only
 * across nodes, for both backends, with real packets. Each expectation names the Kubernetes e2e
 * test (test/e2e/network) whose behaviour it checks; {@link E2eTable} reports them.
 */
@ExtendWith(E2eTable.class)
class CrossNodeKernelTest {
    /** Runs the test once per backend, its mode ("nftables" or "iptables") as the argument. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"nftables", "iptables"})
    @interface BothBackends {
    }

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

    /** What {@code tries} TCP connections from {@code from} to dst:port ended in, each as {@code as} tells it. */
    static Set<String> answers(Netns from, String dst, int port, int tries, Function<Outcome, String> as) throws Exception {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < tries; i++) {
            seen.add(as.apply(Clients.tcp(from, null, dst, port)));
        }
        return seen;
    }

    @E2e({"networking.go: should function for pod-Service: http",
            "service.go: should be able to create a functioning NodePort service",
            "loadbalancer.go: ESIPP should work for type=NodePort",
            "loadbalancer.go: ESIPP should only target nodes with endpoints",
            "service.go: should respect internalTrafficPolicy=Local Pod to Pod",
            "service.go: should have session affinity work for NodePort service"})
    @BothBackends
    void servicesAcrossNodes(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-x")) {
            c.serve(B, "10.244.2.10", 8080);
            c.serve(B, "10.244.2.11", 8080);
            c.serve(B, "10.244.2.12", 8080);
            c.serve(B, "10.244.2.13", 8080);
            c.serve(C, "10.244.3.13", 8080);
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
                    .service("sticky", "10.96.0.13", "[{name: http, port: 80, targetPort: 8080, nodePort: 30083}]", "type: NodePort",
                            "sessionAffinity: ClientIP", "sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}")
                    .slice("sticky", "a", "IPv4", http, "10.244.2.13@node-b", "10.244.3.13@node-c")
                    .service("spread", "10.96.0.14", "[{name: http, port: 80, targetPort: 8080, nodePort: 30084}]", "type: NodePort")
                    .slice("spread", "a", "IPv4", http, "10.244.2.13@node-b", "10.244.3.13@node-c")
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

            // service.go "should have session affinity work for NodePort service": through node-a,
            // one client always reaches the same endpoint of two on other nodes; without affinity
            // both answer (the chance that 30 connections all pick one of two is 2^-29).
            Set<String> sticky = answers(c.ext, Cluster.nodeIp(A), 30083, 30, CrossNodeKernelTest::answer);
            Set<String> spread = answers(c.ext, Cluster.nodeIp(A), 30084, 30, CrossNodeKernelTest::answer);
            assertEquals(1, sticky.size(), "ClientIP affinity: " + sticky);
            assertEquals(Set.of("10.244.2.13:8080 saw " + Cluster.nodeIp(A), "10.244.3.13:8080 saw " + Cluster.nodeIp(A)), spread);
        }
    }

    /**
     * loadbalancer.go (ESIPP) "should work for type=LoadBalancer": with externalTrafficPolicy
     * Local, each node's proxy answers the service's healthCheckNodePort for its own endpoints, so
     * a load balancer sends traffic only to nodes that have one: 200 with the count there, 503
     * elsewhere. One daemon per node, as the DaemonSet runs them, over the same manifests.
     */
    @E2e({"loadbalancer.go: ESIPP should work for type=LoadBalancer"})
    @BothBackends
    void healthCheckNodePortsAnswerForTheirOwnNode(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-x")) {
            c.serve(B, "10.244.2.20", 8080);
            c.serve(C, "10.244.3.20", 8080);
            c.serve(C, "10.244.3.21", 8080);
            new Manifests()
                    .service("lb", "10.96.0.20", "[{name: http, port: 80, targetPort: 8080, nodePort: 30090}]", "type: LoadBalancer",
                            "externalTrafficPolicy: Local", "healthCheckNodePort: 32100")
                    .slice("lb", "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}]", "10.244.2.20@node-b",
                            "10.244.3.20@node-c", "10.244.3.21@node-c")
                    .write(dir, "services.yaml");
            List<AutoCloseable> running = daemons(c, dir, mode);
            try {
                String[] want = {"503 0", "200 1", "200 2"};
                for (int n : new int[] {A, B, C}) {
                    String at = Cluster.nodeIp(n) + ":32100";
                    Sandbox.eventually(Duration.ofSeconds(20), () -> health(c.ext, at).equals(want[n]),
                            Cluster.NODES.get(n) + " answers " + want[n] + " (status, local endpoints)");
                }
                // And the traffic a load balancer sends there is served by that node's endpoints, client address kept.
                assertEquals("10.244.2.20:8080 saw " + Cluster.EXT_IP, answer(Clients.tcp(c.ext, null, Cluster.nodeIp(B), 30090)));
                assertEquals(TIMEOUT, Clients.tcp(c.ext, null, Cluster.nodeIp(A), 30090).result());
            } finally {
                stop(running);
            }
        }
    }

    /**
     * conntrack.go and loadbalancer.go "should be able to preserve UDP traffic when server pod
     * cycles": clients keep sending, each from one source port, to node-a's NodePort, to the
     * ClusterIP (from a pod on node-a) and to the load-balancer IP (through node-a) while the
     * service's endpoint moves from node-b to node-c; once the proxies have synced, each flow
     * reaches the new endpoint (node-a deletes the flows conntrack still holds to the old one,
     * whose pod here even keeps answering).
     */
    @E2e({"conntrack.go: should be able to preserve UDP traffic when server pod cycles for a NodePort service",
            "conntrack.go: should be able to preserve UDP traffic when server pod cycles for a ClusterIP service",
            "loadbalancer.go: should be able to preserve UDP traffic when server pod cycles for a LoadBalancer service on different nodes"})
    @BothBackends
    void udpFlowsFollowAnEndpointThatMovesToAnotherNode(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-x")) {
            c.serve(B, "10.244.2.30", 5353);
            c.serve(C, "10.244.3.30", 5353);
            Netns podA = c.pod(A, "10.244.1.130");
            String ports = "[{name: dns, port: 5353, protocol: UDP}]";
            String svc = "[{name: dns, port: 53, targetPort: 5353, nodePort: 30053, protocol: UDP}]";
            String lb = "\nstatus:\n  loadBalancer:\n    ingress: [{ip: 203.0.113.53}]";
            new Manifests().service("dns", "10.96.0.53", svc, "type: LoadBalancer" + lb)
                    .slice("dns", "a", "IPv4", ports, "10.244.2.30@node-b").write(dir, "dns.yaml");
            List<AutoCloseable> running = daemons(c, dir, mode);
            try {
                for (String endpoint : List.of("10.244.2.30:5353", "10.244.3.30:5353")) {
                    if (endpoint.startsWith("10.244.3.")) {
                        new Manifests().service("dns", "10.96.0.53", svc, "type: LoadBalancer" + lb)
                                .slice("dns", "a", "IPv4", ports, "10.244.3.30@node-c").write(dir, "dns.yaml");
                    }
                    Sandbox.eventually(Duration.ofSeconds(20), () -> endpoint.equals(
                            Clients.udp(c.ext, Cluster.EXT_IP, 40053, Cluster.nodeIp(A), 30053).answeredBy()),
                            "the NodePort flow reaches " + endpoint);
                    Sandbox.eventually(Duration.ofSeconds(20), () -> endpoint.equals(
                            Clients.udp(podA, "10.244.1.130", 40054, "10.96.0.53", 53).answeredBy()),
                            "the ClusterIP flow reaches " + endpoint);
                    Sandbox.eventually(Duration.ofSeconds(20), () -> endpoint.equals(
                            Clients.udp(c.ext, Cluster.EXT_IP, 40055, "203.0.113.53", 53).answeredBy()),
                            "the load-balancer flow reaches " + endpoint);
                }
            } finally {
                stop(running);
            }
        }
    }

    /**
     * traffic_distribution.go "should route traffic to an endpoint in the same zone when using
     * PreferClose": the nodes' zones from their Node objects, the endpoints' hints from the
     * EndpointSlice; a pod reaches only the endpoint hinted for its own node's zone.
     */
    @E2e({"traffic_distribution.go: should route traffic to an endpoint in the same zone when using PreferClose"})
    @BothBackends
    void trafficStaysInTheClientsZone(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-x")) {
            c.serve(B, "10.244.2.40", 8080);
            c.serve(C, "10.244.3.40", 8080);
            Netns podA = c.pod(A, "10.244.1.140");
            Netns podC = c.pod(C, "10.244.3.140");
            Manifests m = new Manifests();
            String[] zones = {"z1", "z1", "z2"};
            for (int i = 0; i < Cluster.NODES.size(); i++) {
                m.raw("apiVersion: v1\nkind: Node\nmetadata:\n  name: " + Cluster.NODES.get(i) + "\n  labels: {topology.kubernetes.io/zone: "
                        + zones[i] + "}\nstatus:\n  addresses: [{type: InternalIP, address: " + Cluster.nodeIp(i) + "}]\n");
            }
            m.service("zonal", "10.96.0.40", "[{name: http, port: 80, targetPort: 8080}]", "trafficDistribution: PreferClose")
                    .slice("zonal", "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}]",
                            "10.244.2.40@node-b[zone=z1,hints=z1]", "10.244.3.40@node-c[zone=z2,hints=z2]")
                    .write(dir, "services.yaml");
            programEveryNode(c, dir, mode);
            Set<String> fromA = answers(podA, "10.96.0.40", 80, 20, CrossNodeKernelTest::answer);
            Set<String> fromC = answers(podC, "10.96.0.40", 80, 20, CrossNodeKernelTest::answer);
            assertEquals(Set.of("10.244.2.40:8080 saw 10.244.1.140"), fromA, "node-a is in z1: the z1 endpoint on node-b");
            assertEquals(Set.of("10.244.3.40:8080 saw 10.244.3.140"), fromC, "node-c is in z2: its own endpoint");
        }
    }

    /**
     * traffic_distribution.go, PreferSameNode: with every endpoint hinted for its own node, a pod
     * on a node that has one reaches only that one; a pod on a node no hint names reaches all.
     */
    @E2e({"traffic_distribution.go: should route traffic correctly between pods on multiple nodes when using PreferSameNode"})
    @BothBackends
    void preferSameNodeKeepsTrafficOnTheNode(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-x")) {
            c.serve(B, "10.244.2.60", 8080);
            c.serve(C, "10.244.3.60", 8080);
            Netns podA = c.pod(A, "10.244.1.160");
            Netns podB = c.pod(B, "10.244.2.160");
            new Manifests().service("near", "10.96.0.60", "[{name: http, port: 80, targetPort: 8080}]",
                            "trafficDistribution: PreferSameNode")
                    .slice("near", "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}]",
                            "10.244.2.60@node-b[nodeHints=node-b]", "10.244.3.60@node-c[nodeHints=node-c]")
                    .write(dir, "services.yaml");
            programEveryNode(c, dir, mode);
            Set<String> fromA = answers(podA, "10.96.0.60", 80, 20, Outcome::answeredBy);
            Set<String> fromB = answers(podB, "10.96.0.60", 80, 20, Outcome::answeredBy);
            assertEquals(Set.of("10.244.2.60:8080"), fromB, "node-b's pod: the endpoint on node-b only");
            assertEquals(Set.of("10.244.2.60:8080", "10.244.3.60:8080"), fromA, "no hint names node-a: every endpoint");
        }
    }

    /** One proxy daemon per node (as the DaemonSet runs them) over the manifests in {@code dir}; close them with {@link #stop}. */
    static List<AutoCloseable> daemons(Cluster c, Path dir, String mode) throws Exception {
        List<AutoCloseable> running = new ArrayList<>();
        try {
            for (int i = 0; i < Cluster.NODES.size(); i++) {
                running.addAll(daemon(c, i, dir, mode));
            }
            return running;
        } catch (Exception e) {
            stop(running);
            throw e;
        }
    }

    /** The proxy daemon of one node, started: its server, source and client, to close in reverse order. */
    static List<AutoCloseable> daemon(Cluster c, int i, Path dir, String mode) throws Exception {
        List<AutoCloseable> running = new ArrayList<>();
        try {
            Netns node = c.nodes.get(i);
            ProxyConfig cfg = ProxyConfig.builder(Cluster.NODES.get(i)).nodeIPs(List.of(Inet.parse(Cluster.nodeIp(i))))
                    .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16")))
                    .serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16"))).minSyncPeriod(Duration.ofMillis(50)).build();
            ObjectStore store = new ObjectStore(Cluster.NODES.get(i));
            NftClient nft = NftClient.open(node.ns());
            running.add(nft);
            ManifestSource src = new ManifestSource(dir, store);
            running.add(src);
            ProxyServer server = mode.equals("iptables")
                    ? new ProxyServer(cfg, store, new IptablesSyncer(cfg, node.name()), null, node.ns(), null, null,
                            new SyncListener() { }, EventRecorder.NONE)
                    : new ProxyServer(cfg, store, nft, node.ns(), null, null, new SyncListener() { });
            running.add(server);
            src.start(true);
            server.start();
            return running;
        } catch (Exception e) {
            stop(running);
            throw e;
        }
    }

    /**
     * service.go "should work after restarting kube-proxy [Disruptive]": node-a's proxy stops and
     * a new one starts; a pod on node-a reaches the service throughout (the rules stay in the
     * kernel), and a change made while no proxy ran there arrives with the new one.
     */
    @E2e({"service.go: should work after restarting kube-proxy [Disruptive]"})
    @BothBackends
    void servicesKeepWorkingWhileTheProxyRestarts(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-x")) {
            c.serve(B, "10.244.2.50", 8080);
            c.serve(C, "10.244.3.50", 8080);
            Netns podA = c.pod(A, "10.244.1.150");
            String http = "[{name: http, port: 8080, protocol: TCP}]";
            String ports = "[{name: http, port: 80, targetPort: 8080}]";
            new Manifests().service("web", "10.96.0.50", ports).slice("web", "a", "IPv4", http, "10.244.2.50@node-b")
                    .write(dir, "web.yaml");
            List<AutoCloseable> others = new ArrayList<>();
            others.addAll(daemon(c, B, dir, mode));
            others.addAll(daemon(c, C, dir, mode));
            List<AutoCloseable> onA = daemon(c, A, dir, mode);
            try {
                Sandbox.eventually(Duration.ofSeconds(20), () -> "10.244.2.50:8080".equals(
                        Clients.tcp(podA, null, "10.96.0.50", 80).answeredBy()), "the service works");
                stop(onA);
                for (int i = 0; i < 10; i++) {
                    assertEquals("10.244.2.50:8080 saw 10.244.1.150", answer(Clients.tcp(podA, null, "10.96.0.50", 80)),
                            "no proxy on node-a: the rules it left keep serving");
                }
                new Manifests().service("web", "10.96.0.50", ports).slice("web", "a", "IPv4", http, "10.244.3.50@node-c")
                        .write(dir, "web.yaml");
                onA = daemon(c, A, dir, mode);
                Sandbox.eventually(Duration.ofSeconds(20), () -> "10.244.3.50:8080".equals(
                        Clients.tcp(podA, null, "10.96.0.50", 80).answeredBy()), "the change made meanwhile arrives");
            } finally {
                stop(onA);
                stop(others);
            }
        }
    }

    static void stop(List<AutoCloseable> running) throws Exception {
        for (int i = running.size() - 1; i >= 0; i--) {
            running.get(i).close();
        }
    }

    /** "STATUS LOCAL_ENDPOINTS" of a healthCheckNodePort, asked from {@code from}. */
    static String health(Netns from, String hostPort) throws Exception {
        String r = OperationsKernelTest.curl(from, hostPort);
        Matcher m = Pattern.compile("\"localEndpoints\": (\\d+)").matcher(r);
        return r.substring(0, 3) + " " + (m.find() ? m.group(1) : "?");
    }
}
