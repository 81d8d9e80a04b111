package io.nftproxy.proxy.kernel;

import static io.nftproxy.proxy.kernel.CrossNodeKernelTest.A;
import static io.nftproxy.proxy.kernel.CrossNodeKernelTest.B;
import static io.nftproxy.proxy.kernel.CrossNodeKernelTest.C;
import static io.nftproxy.proxy.kernel.CrossNodeKernelTest.answer;
import static io.nftproxy.proxy.kernel.CrossNodeKernelTest.daemons;
import static io.nftproxy.proxy.kernel.CrossNodeKernelTest.programEveryNode;
import static io.nftproxy.proxy.kernel.CrossNodeKernelTest.stop;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.ConnectException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.proxy.kernel.CrossNodeKernelTest.BothBackends;
import io.nftproxy.sandbox.Clients;
import io.nftproxy.sandbox.Cluster;
import io.nftproxy.sandbox.Netns;
import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.testkit.Kernel;

/**
 * Load balancers across three nodes, as {@link CrossNodeKernelTest}: traffic from pods to a
 * load-balancer IP, source ranges, a service's external traffic policy changed while it runs,
 * health checks with only terminating endpoints. The external client reaches load-balancer IPs
 * through node-a. {@link E2eTable} reports the e2e tests ported.
 */
@ExtendWith(E2eTable.class)
class CrossNodeLoadBalancerKernelTest {
    /** A LoadBalancer service with its load-balancer IP in the status; {@code extra} are spec lines. */
    static String loadBalancer(String name, String clusterIP, String lbIP, int nodePort, String... extra) {
        StringBuilder s = new StringBuilder("apiVersion: v1\nkind: Service\nmetadata: {name: " + name + ", namespace: default}\n"
                + "spec:\n  type: LoadBalancer\n  clusterIP: " + clusterIP + "\n  clusterIPs: [" + clusterIP + "]\n"
                + "  ports: [{name: http, port: 80, targetPort: 8080, nodePort: " + nodePort + "}]\n");
        for (String e : extra) {
            s.append("  ").append(e).append('\n');
        }
        return s.append("status:\n  loadBalancer:\n    ingress: [{ip: ").append(lbIP).append("}]\n").toString();
    }

    static final String HTTP = "[{name: http, port: 8080, protocol: TCP}]";

    @E2e({"loadbalancer.go: ESIPP should work from pods",
            "loadbalancer.go: should only allow access from service loadbalancer source ranges"})
    @BothBackends
    void podsAndSourceRangesAtTheLoadBalancerIp(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-x")) {
            c.serve(B, "10.244.2.40", 8080);
            c.serve(C, "10.244.3.41", 8080);
            Netns podA = c.pod(A, "10.244.1.140");
            Netns allowed = c.pod(A, "10.244.1.141");
            Netns denied = c.pod(A, "10.244.1.142");
            Manifests m = new Manifests()
                    .raw(loadBalancer("esipp", "10.96.0.40", "203.0.113.40", 30040, "externalTrafficPolicy: Local"))
                    .slice("esipp", "a", "IPv4", HTTP, "10.244.2.40@node-b");
            m.raw(loadBalancer("ranged", "10.96.0.41", "203.0.113.41", 30041, "loadBalancerSourceRanges: [10.244.1.141/32]"))
                    .slice("ranged", "a", "IPv4", HTTP, "10.244.3.41@node-c").write(dir, "services.yaml");
            programEveryNode(c, dir, mode);

            // ESIPP "should work from pods": a pod reaching an externalTrafficPolicy Local service by
            // its load-balancer IP is served as in-cluster traffic: by the endpoint on another node,
            // its own address kept, although its node has no endpoint.
            assertEquals("10.244.2.40:8080 saw 10.244.1.140", answer(Clients.tcp(podA, null, "203.0.113.40", 80)));

            // Source ranges hold for pods and for outside clients alike. (With policy Cluster, traffic
            // to an external destination is masqueraded whoever sends it, as kube-proxy does.)
            assertEquals("10.244.3.41:8080 saw " + Cluster.nodeIp(A), answer(Clients.tcp(allowed, null, "203.0.113.41", 80)));
            assertEquals(TIMEOUT, Clients.tcp(denied, null, "203.0.113.41", 80).result(), "a pod outside the ranges");
            assertEquals(TIMEOUT, Clients.tcp(c.ext, null, "203.0.113.41", 80).result(), "a client outside the ranges");

            // The ranges changed: now the outside client and the other pod, not the first.
            new Manifests().raw(loadBalancer("esipp", "10.96.0.40", "203.0.113.40", 30040, "externalTrafficPolicy: Local"))
                    .slice("esipp", "a", "IPv4", HTTP, "10.244.2.40@node-b")
                    .raw(loadBalancer("ranged", "10.96.0.41", "203.0.113.41", 30041,
                            "loadBalancerSourceRanges: [192.168.60.10/32, 10.244.1.142/32]"))
                    .slice("ranged", "a", "IPv4", HTTP, "10.244.3.41@node-c").write(dir, "services.yaml");
            programEveryNode(c, dir, mode);
            assertEquals("10.244.3.41:8080 saw " + Cluster.nodeIp(A), answer(Clients.tcp(denied, null, "203.0.113.41", 80)));
            assertEquals("10.244.3.41:8080 saw " + Cluster.nodeIp(A), answer(Clients.tcp(c.ext, null, "203.0.113.41", 80)),
                    "masqueraded by node-a, which it entered");
            assertEquals(TIMEOUT, Clients.tcp(allowed, null, "203.0.113.41", 80).result(), "no longer in the ranges");
        }
    }

    /** "STATUS LOCAL_ENDPOINTS" of a healthCheckNodePort, or "refused" when nothing listens there. */
    static String health(Netns from, String hostPort) throws Exception {
        try {
            return CrossNodeKernelTest.health(from, hostPort);
        } catch (IllegalStateException e) { // the namespace's thread hands its exception over wrapped
            if (e.getCause() instanceof ConnectException) {
                return "refused";
            }
            throw e;
        }
    }

    static void eventually(Netns from, String hostPort, String want, String what) throws Exception {
        String[] last = {null};
        try {
            Sandbox.eventually(Duration.ofSeconds(20), () -> (last[0] = health(from, hostPort)).equals(want), what + ": " + want);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; the last answer: " + last[0], e);
        }
    }

    static void writeFlip(Path dir, boolean local, String termEndpoint) throws Exception {
        new Manifests()
                .raw(local ? loadBalancer("flip", "10.96.0.42", "203.0.113.42", 30042, "externalTrafficPolicy: Local",
                        "healthCheckNodePort: 32102") : loadBalancer("flip", "10.96.0.42", "203.0.113.42", 30042))
                .slice("flip", "a", "IPv4", HTTP, "10.244.2.42@node-b")
                .raw(loadBalancer("term", "10.96.0.43", "203.0.113.43", 30043, "externalTrafficPolicy: Local",
                        "healthCheckNodePort: 32103"))
                .slice("term", "a", "IPv4", HTTP, termEndpoint)
                .write(dir, "services.yaml");
    }

    @E2e({"loadbalancer.go: ESIPP should handle updates to ExternalTrafficPolicy field",
            "service.go: should fail health check node port if there are only terminating endpoints"})
    @BothBackends
    void externalTrafficPolicyChangesAndTerminatingEndpointsInHealthChecks(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (Cluster c = new Cluster("nftp-x")) {
            c.serve(B, "10.244.2.42", 8080);
            c.serve(C, "10.244.3.43", 8080);
            writeFlip(dir, true, "10.244.3.43@node-c");
            List<AutoCloseable> running = daemons(c, dir, mode);
            try {
                String hcA = Cluster.nodeIp(A) + ":32102";
                String hcB = Cluster.nodeIp(B) + ":32102";
                eventually(c.ext, hcA, "503 0", "node-a, without an endpoint");
                eventually(c.ext, hcB, "200 1", "node-b, with one");
                assertEquals("10.244.2.42:8080 saw " + Cluster.EXT_IP, answer(Clients.tcp(c.ext, null, Cluster.nodeIp(B), 30042)));
                assertEquals(TIMEOUT, Clients.tcp(c.ext, null, Cluster.nodeIp(A), 30042).result(), "Local: none on node-a");

                // Local → Cluster: the health checks close and every node serves, masquerading.
                writeFlip(dir, false, "10.244.3.43@node-c");
                eventually(c.ext, hcA, "refused", "node-a's health check, closed");
                eventually(c.ext, hcB, "refused", "node-b's health check, closed");
                assertEquals("10.244.2.42:8080 saw " + Cluster.nodeIp(A), answer(Clients.tcp(c.ext, null, Cluster.nodeIp(A), 30042)),
                        "Cluster: node-a serves, masqueraded");

                // And back: health checks again, the client's address kept.
                writeFlip(dir, true, "10.244.3.43@node-c");
                eventually(c.ext, hcB, "200 1", "node-b again");
                eventually(c.ext, hcA, "503 0", "node-a again");
                assertEquals("10.244.2.42:8080 saw " + Cluster.EXT_IP, answer(Clients.tcp(c.ext, null, Cluster.nodeIp(B), 30042)));

                // service.go: node-c's only endpoint of "term" starts terminating (still serving): the
                // health check fails so that load balancers drain the node, while the node keeps
                // serving the connections that still reach it.
                String hcC = Cluster.nodeIp(C) + ":32103";
                eventually(c.ext, hcC, "200 1", "node-c, its endpoint ready");
                writeFlip(dir, true, "10.244.3.43@node-c[ready=false,serving=true,terminating=true]");
                eventually(c.ext, hcC, "503 0", "node-c, its endpoint terminating");
                assertEquals("10.244.3.43:8080 saw " + Cluster.EXT_IP, answer(Clients.tcp(c.ext, null, Cluster.nodeIp(C), 30043)),
                        "the terminating endpoint still serves through its node");
            } finally {
                stop(running);
            }
        }
    }
}
