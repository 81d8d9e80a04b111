package io.nftproxy.proxy.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.sandbox.Netns;
import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.proxy.server.ProxyServer;
import io.nftproxy.proxy.source.ManifestSource;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.trace.TraceExplainer;
import io.nftproxy.proxy.trace.TraceFilter;
import io.nftproxy.proxy.trace.Tracer;

/**
 * {@code nftproxy trace} with real packets: a connection to a ClusterIP is named by its service
 * and the endpoint that answered, one to a service without endpoints shows the reject, one from
 * outside to a Local NodePort shows the local-only choice; the marking chains are gone after.
 */
class TraceCommandKernelTest {
    private static final String HTTP = "[{name: http, port: 8080, protocol: TCP}]";

    private static ProxyState model(Path dir) throws Exception {
        ObjectStore store = new ObjectStore("node-a");
        try (ManifestSource m = new ManifestSource(dir, store)) {
            m.start(false);
        }
        return store.snapshot().state();
    }

    private static TraceExplainer.Explanation trace(Topology topo, ProxyState state, TraceFilter f, Runnable traffic)
            throws Exception {
        List<TraceExplainer.Explanation> got = new Tracer(topo.node.ns(), "nftproxy", 1 << 14)
                .run(f, state, 1, Duration.ofSeconds(20), traffic, e -> { });
        assertEquals(1, got.size(), "one packet traced");
        return got.get(0);
    }

    private static Runnable connect(Topology topo, Netns from, String src, String dst, int port) {
        return () -> {
            try {
                topo.tcp(from, src, dst, port);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
    }

    @Test
    void tracesNameTheServiceTheEndpointAndTheReasons(@TempDir Path dir) throws Exception {
        try (Topology topo = new Topology()) {
            topo.serve("10.244.1.2", 8080);
            topo.serve("10.244.1.3", 8080);
            Netns client = topo.pod("10.244.2.100");
            new Manifests()
                    .service("web", "10.96.0.10", "[{name: http, port: 80}]")
                    .slice("web", "a", "IPv4", HTTP, "10.244.1.3@node-b")
                    .service("empty", "10.96.0.11", "[{name: http, port: 80}]")
                    .service("local", "10.96.0.13", "[{name: http, port: 80, nodePort: 30083}]", "type: NodePort",
                            "externalTrafficPolicy: Local")
                    .slice("local", "a", "IPv4", HTTP, "10.244.1.2@node-a", "10.244.1.3@node-b")
                    .write(dir, "services.yaml");
            ProxyRun.once(topo, dir);
            ProxyState state = model(dir);

            TraceExplainer.Explanation web = trace(topo, state, new TraceFilter(Inet.parse("10.244.2.100"),
                    List.of(new TraceFilter.Destination(Inet.parse("10.96.0.10"), 80)), Protocol.TCP),
                    connect(topo, client, "10.244.2.100", "10.96.0.10", 80));
            assertTrue(web.outcome().startsWith("service default/web port http (tcp) via its ClusterIP: endpoint 10.244.1.3:8080"),
                    web.toString());
            assertTrue(web.outcome().contains("no masquerade"), "pod to service stays unmasqueraded: " + web);
            String text = web.toString();
            assertTrue(text.contains("tcp 10.244.2.100:") && text.contains(" -> 10.96.0.10:80"), text);
            assertTrue(text.contains("hook prerouting"), text);
            assertTrue(text.contains("nat-prerouting") && text.contains("jump services"), text);
            assertTrue(text.contains("@service-ips goto ip-pick-1-128  => goto ip-pick-1-128"), "the rule, in nft syntax, and its verdict: " + text);
            assertTrue(text.matches("(?s).*ip-pick-1-4 +goto ip-pick-1-2  => goto ip-pick-1-2\n +ip-pick-1-2 +dnat ip to .*numgen random mod 1 .*"),
                    "down the tree to the chain that picks one: " + text);

            TraceExplainer.Explanation empty = trace(topo, state, new TraceFilter(null,
                    List.of(new TraceFilter.Destination(Inet.parse("10.96.0.11"), 80)), Protocol.TCP),
                    connect(topo, client, "10.244.2.100", "10.96.0.11", 80));
            assertEquals("service default/empty port http (tcp) via its ClusterIP: rejected: the service port has no endpoints",
                    empty.outcome(), empty.toString());
            assertTrue(empty.toString().contains("@no-endpoint-reject"), empty.toString());

            TraceExplainer.Explanation local = trace(topo, state, new TraceFilter(null,
                    List.of(new TraceFilter.Destination(null, 30083)), Protocol.TCP),
                    connect(topo, topo.ext, Sandbox.EXT_IP, Sandbox.NODE_IP, 30083));
            assertTrue(local.outcome().startsWith("service default/local port http (tcp) via its NodePort: endpoint 10.244.1.2:8080"
                    + " (externalTrafficPolicy Local: chosen among this node's endpoints only)"), local.toString());

            try (NftClient nft = NftClient.open(topo.node.ns())) {
                assertFalse(nft.listChains(Family.IP, "nftproxy").stream().anyMatch(c -> c.name().startsWith("trace-")),
                        "the marking chains are gone");
            }
        }
    }

    /** One service, web (10.96.0.10:80), served by 10.244.1.3; returns the client pod 10.244.2.100. */
    private static Netns webOnly(Topology topo, Path dir) throws Exception {
        topo.serve("10.244.1.3", 8080);
        new Manifests()
                .service("web", "10.96.0.10", "[{name: http, port: 80}]")
                .slice("web", "a", "IPv4", HTTP, "10.244.1.3@node-b")
                .write(dir, "services.yaml");
        return topo.pod("10.244.2.100");
    }

    @Test
    void theCommandPrintsTheTraceOfOneConnection(@TempDir Path dir) throws Exception {
        try (Topology topo = new Topology()) {
            Netns client = webOnly(topo, dir);
            ProxyRun.once(topo, dir);
            // No source: the service's frontends, and its name in the outcome, come from the kernel.
            CompletableFuture<ProxyRun.Result> run = CompletableFuture.supplyAsync(() -> ProxyRun.cli("trace", "--netns",
                    topo.node.name(), "--destination", "default/web", "--timeout", "20s"));
            // Connections until the command has traced one: the first may come before its chains are in.
            List<String> answers = new ArrayList<>();
            Sandbox.eventually(Duration.ofSeconds(30), () -> {
                answers.add(String.valueOf(topo.tcp(client, "10.244.2.100", "10.96.0.10", 80).answeredBy()));
                return run.isDone();
            }, "the trace command ends after one packet");
            ProxyRun.Result r = run.get();
            assertEquals(0, r.exit(), r.err());
            assertTrue(r.out().contains("=> service default/web port http (tcp) via its ClusterIP: endpoint 10.244.1.3:8080"),
                    r.out());
            assertTrue(answers.stream().allMatch("10.244.1.3:8080"::equals), "tracing changed nothing: " + answers);
        }
    }

    @Test
    void aTraceBesideTheRunningProxyIsNotDrift(@TempDir Path dir) throws Exception {
        try (Topology topo = new Topology()) {
            Netns client = webOnly(topo, dir);
            try (Daemon d = Daemon.start(topo, dir, OperationsKernelTest.config(), Daemon.anyPort(), null)) {
                ProxyServer server = d.server();
                Sandbox.eventually(Duration.ofSeconds(20), () -> "10.244.1.3:8080".equals(
                        topo.tcp(client, "10.244.2.100", "10.96.0.10", 80).answeredBy()), "web answers");
                // No manifests, no API server: the service is named from our elements' comments in the kernel.
                TraceExplainer.Explanation e = trace(topo, null, new TraceFilter(null,
                        List.of(new TraceFilter.Destination(Inet.parse("10.96.0.10"), 80)), Protocol.TCP),
                        connect(topo, client, "10.244.2.100", "10.96.0.10", 80));
                assertTrue(e.outcome().startsWith("service default/web port http (tcp) via its ClusterIP: endpoint 10.244.1.3:8080"),
                        e.toString());
                assertTrue(topo.node.exec("nft", "list", "set", "ip", "nftproxy", "service-ips")
                        .contains("10.96.0.10 . tcp . 80 comment \"default/web:http\""),
                        "nft itself lists the element with the service port's name");
                // The drift watcher saw the marking chains come and go; they were not someone else's change.
                assertEquals(0.0, OperationsKernelTest.scrape(server.metricsPort()).get("nftproxy_drift_repairs_total"));
                assertEquals("10.244.1.3:8080", topo.tcp(client, "10.244.2.100", "10.96.0.10", 80).answeredBy());
            }
        }
    }
}
