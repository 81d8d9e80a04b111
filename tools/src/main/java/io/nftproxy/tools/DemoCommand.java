package io.nftproxy.tools;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.sandbox.Netns;
import io.nftproxy.proxy.cli.DemoManifests;
import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.proxy.server.ProxyServer;
import io.nftproxy.proxy.source.ManifestSource;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.trace.TraceExplainer;
import io.nftproxy.proxy.trace.TraceFilter;
import io.nftproxy.proxy.trace.Tracer;

/**
 * A guided tour in a sandbox: network namespaces for a node, pods and clients; the example
 * manifests programmed into the node through netlink; real connections; the results; then
 * everything removed (also on Ctrl-C and on failure).
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Build a sandbox of network namespaces, proxy example services, send traffic, show the results.")
final class DemoCommand implements Callable<Integer> {
    private static final String[] PODS = {"10.244.1.2", "10.244.1.3", "10.244.1.4", "10.244.1.5"};

    @Option(names = "--manifests", paramLabel = "DIR", description = "Use these manifests instead of the built-in examples.")
    Path manifests;

    @Option(names = "--keep", description = "Keep the sandbox until Ctrl-C, to look around (nftproxy dump --netns NODE).")
    boolean keep;

    private final PrintStream out = System.out;
    private AutoCloseable[] running = new AutoCloseable[0];

    @Override
    public Integer call() throws Exception {
        String why = Preflight.problem();
        if (why != null) {
            System.err.println("nftproxy demo: " + why);
            return 1;
        }
        long t0 = System.nanoTime();
        Path dir = manifests != null ? manifests : DemoManifests.examples();
        Sandbox[] box = new Sandbox[1];
        Thread cleanup = new Thread(() -> {
            if (box[0] != null) {
                box[0].close();
            }
        }, "demo-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            step("Building the sandbox: a node, four pods, a pod client and an external client (network namespaces)");
            box[0] = new Sandbox("nftproxy-demo");
            Sandbox s = box[0];
            for (String pod : PODS) {
                s.serve(pod, 8080);
            }
            Netns podClients = s.pod("10.244.2.10", "10.244.2.11", "10.244.2.12");
            out.println("  node " + s.node.name() + " (" + Sandbox.NODE_IP + "), external client " + Sandbox.EXT_IP
                    + ", pods " + String.join(", ", PODS));

            step("Running nftproxy for the node on " + (manifests != null ? dir : "the built-in example manifests")
                    + ": rules go in over netlink (no nft binary involved)");
            ProxyConfig cfg = ProxyConfig.builder("demo-node").nodeIPs(List.of(Inet.parse(Sandbox.NODE_IP)))
                    .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16")))
                    .serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16"))).build().withEndpointCounters(true);
            ObjectStore store = new ObjectStore("demo-node");
            SyncResult[] first = new SyncResult[1];
            ProxyState[] synced = new ProxyState[1];
            SyncListener record = new SyncListener() {
                @Override
                public void synced(SyncResult r, long nanos, ObjectStore.Snapshot snap) {
                    synced[0] = snap.state();
                    if (first[0] == null) {
                        first[0] = r;
                        new TreeMap<>(snap.errors()).values().forEach(e -> out.println("  ! " + e));
                        out.printf("  %d service ports -> one atomic transaction of %d operations, %d messages, %.1f ms in the kernel%n",
                                snap.state().services().size(), r.commit().operations(), r.commit().messages(),
                                r.commit().kernelNanos() / 1e6);
                    }
                }
            };
            NftClient nft = NftClient.open(s.node.ns());
            ManifestSource src = new ManifestSource(dir, store);
            ProxyServer proxy = new ProxyServer(cfg, store, nft, s.node.ns(), new InetSocketAddress("127.0.0.1", 0),
                    new InetSocketAddress("127.0.0.1", 0), record);
            running = new AutoCloseable[] {proxy, src, nft};
            src.start(true);
            proxy.start();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (first[0] == null && System.nanoTime() < deadline) {
                Thread.sleep(20); // polling the sync loop's first result, with a deadline
            }
            if (first[0] == null) {
                throw new IllegalStateException("the first sync did not complete within 30 s");
            }
            try (NftClient reader = NftClient.open(s.node.ns())) {
                printRules(reader.readTable(Family.IP, "nftproxy"));
            }
            String metricsUrl = "http://127.0.0.1:" + proxy.metricsPort() + "/metrics";

            step("web (10.96.0.10:80, 3 pods): 90 connections from a pod");
            Map<String, Integer> spread = new TreeMap<>();
            for (int i = 0; i < 90; i++) {
                Sandbox.Outcome o = s.tcp(podClients, "10.244.2.10", "10.96.0.10", 80);
                spread.merge(String.valueOf(o.answeredBy()), 1, Integer::sum);
            }
            spread.forEach((ep, n) -> out.printf("  %-18s %3d  %s%n", ep, n, "#".repeat(n)));
            // Conclusions only where the traffic showed them; otherwise say what went wrong.
            List<String> unexpected = new ArrayList<>();
            conclude(spread.keySet().equals(Set.of("10.244.1.2:8080", "10.244.1.3:8080", "10.244.1.4:8080")),
                    "every pod answered: the connections are spread at random", "web was answered by " + spread.keySet(), unexpected);

            step("shop (NodePort 30080, externalTrafficPolicy Local): 10 connections from outside to "
                    + Sandbox.NODE_IP + ":30080");
            Map<String, Integer> local = new LinkedHashMap<>();
            for (int i = 0; i < 10; i++) {
                Sandbox.Outcome o = s.tcp(s.ext, null, Sandbox.NODE_IP, 30080);
                local.merge(o.answeredBy() + " saw client " + o.peerSeen(), 1, Integer::sum);
            }
            local.forEach((k, n) -> out.printf("  %d x %s%n", n, k));
            conclude(local.keySet().equals(Set.of("10.244.1.2:8080 saw client " + Sandbox.EXT_IP)),
                    "only this node's pod answers, and it sees the real client address (no SNAT)",
                    "shop's answers were " + local.keySet(), unexpected);

            step("cart (ClientIP session affinity): 5 connections from each of 3 pod clients");
            boolean sticky = true;
            for (String c : List.of("10.244.2.10", "10.244.2.11", "10.244.2.12")) {
                List<String> got = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    got.add(String.valueOf(s.tcp(podClients, c, "10.96.0.12", 80).answeredBy()));
                }
                out.printf("  client %-12s -> %s%n", c, String.join(", ", got));
                sticky &= new HashSet<>(got).size() == 1 && !got.contains("null");
            }
            conclude(sticky, "each client stays with one pod", "a client moved between pods", unexpected);

            step("payments (no endpoints): a connection from a pod");
            Sandbox.Outcome o = s.tcp(podClients, "10.244.2.10", "10.96.0.13", 80);
            out.println("  " + o.result() + (o.result() == Sandbox.Outcome.Result.REFUSED
                    ? ": rejected at once with ICMP port unreachable, as kube-proxy does" : ""));
            if (o.result() != Sandbox.Outcome.Result.REFUSED) {
                unexpected.add("payments was " + o.result() + ", not refused");
            }

            step("nftproxy trace: one connection from outside to shop's NodePort, rule by rule");
            TraceFilter toShop = new TraceFilter(Inet.parse(Sandbox.EXT_IP), List.of(new TraceFilter.Destination(null, 30080)),
                    Protocol.TCP);
            List<TraceExplainer.Explanation> traced = new Tracer(s.node.ns(), "nftproxy", 1 << 14).run(toShop, synced[0], 1,
                    Duration.ofSeconds(10), () -> {
                        try {
                            s.tcp(s.ext, null, Sandbox.NODE_IP, 30080);
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    }, e -> e.lines().forEach(l -> out.println("  " + l)));
            conclude(!traced.isEmpty() && traced.get(0).outcome().startsWith(
                            "service demo/shop port http (tcp) via its NodePort: endpoint 10.244.1.2:8080"),
                    "the trace names the service and the local endpoint it chose",
                    "the trace showed " + (traced.isEmpty() ? "nothing" : traced.get(0).outcome()), unexpected);

            step("Metrics, as kube-proxy exports them, and connections counted in the kernel (--endpoint-counters): "
                    + metricsUrl + "  (health: http://127.0.0.1:" + proxy.healthPort() + "/healthz)");
            String scraped = new String(new URL(metricsUrl).openStream().readAllBytes(), StandardCharsets.UTF_8);
            scraped.lines().filter(l -> l.startsWith("kubeproxy_sync_proxy_rules_duration_seconds_count")
                    || l.startsWith("kubeproxy_sync_proxy_rules_last_timestamp_seconds")
                    || l.startsWith("nftproxy_owned_objects")
                    || l.startsWith("nftproxy_service_connections_total{namespace=\"demo\",service=\"web\"")
                    || l.startsWith("nftproxy_endpoint_connections_total{namespace=\"demo\",service=\"web\"")
                    || l.startsWith("nftproxy_service_refused_connections_total{namespace=\"demo\",service=\"payments\""))
                    .forEach(l -> out.println("  " + l));
            double webTotal = scraped.lines().filter(l -> l.startsWith(
                            "nftproxy_service_connections_total{namespace=\"demo\",service=\"web\""))
                    .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
            conclude(webTotal == 90, "the kernel counted web's 90 connections", "web's counter says " + webTotal, unexpected);

            out.printf("%nDone in %.1f s.%s%n", (System.nanoTime() - t0) / 1e9, keep
                    ? " The sandbox stays until Ctrl-C: sudo java -jar proxy/target/nftproxy.jar dump --netns " + s.node.name()
                    : " Removing the sandbox.");
            if (!unexpected.isEmpty()) {
                out.println("The demo did not behave as expected: " + String.join("; ", unexpected));
            }
            if (keep) {
                Thread.currentThread().join();
            }
            return unexpected.isEmpty() ? 0 : 1;
        } finally {
            for (AutoCloseable c : running) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // the sandbox goes anyway
                }
            }
            if (box[0] != null) {
                box[0].close();
                box[0] = null;
            }
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway
            }
            if (manifests == null) {
                DemoManifests.deleteTree(dir);
            }
        }
    }

    private void step(String what) {
        out.println();
        out.println("== " + what);
    }

    /** The shared picking chains and maps (hundreds of them), by name. */
    private static final Pattern SHARED = Pattern.compile("\t(?:chain|map) ((?:ip|nodeport)-(?:pick|sticky)-\\S+) \\{");
    /**
     * Of those, the trees' roots and the ones web (3 endpoints) and cart (3, affinity of 600 s) go
     * through: the check of cart's clients, one slot of it, and the root of the tree that remembers them.
     */
    private static final Set<String> SHOWN = Set.of("ip-pick-1-" + NftRenderer.MAX_SHARED_PICK,
            "nodeport-pick-1-" + NftRenderer.MAX_SHARED_PICK, "ip-pick-3-4", "ip-sticky-check", "ip-sticky-check-1-8",
            "ip-sticky-1-8-slot-0", "ip-sticky-remember-0-7");

    /** The parts of the table a newcomer wants to see: the maps with content and service chains. */
    private void printRules(TableContents t) {
        String[] lines = t.toString().split("\n");
        out.println("  nft list table ip nftproxy (abridged: empty maps and the shared picking chains left out,"
                + " but the trees' roots and what web and cart, three endpoints each, go through; see docs/ruleset.md):");
        boolean skip = false;
        StringBuilder block = new StringBuilder();
        for (String l : lines) {
            if (l.startsWith("\tmap ") || l.startsWith("\tset ") || l.startsWith("\tchain ")) {
                block.setLength(0);
                Matcher shared = SHARED.matcher(l);
                skip = shared.lookingAt() && !SHOWN.contains(shared.group(1));
            }
            block.append(l).append('\n');
            if (l.equals("\t}")) {
                String b = block.toString();
                boolean empty = (b.startsWith("\tmap ") || b.startsWith("\tset ")) && !b.contains("elements =");
                if (!skip && !empty) {
                    for (String x : b.split("\n")) {
                        out.println("    " + x.replace("\t", "  "));
                    }
                }
                block.setLength(0);
            }
        }
    }

    private void conclude(boolean shown, String conclusion, String otherwise, List<String> unexpected) {
        if (shown) {
            out.println("  -> " + conclusion);
        } else {
            out.println("  !! not as expected: " + otherwise);
            unexpected.add(otherwise);
        }
    }
}
