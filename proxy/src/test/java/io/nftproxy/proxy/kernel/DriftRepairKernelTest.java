package io.nftproxy.proxy.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.proxy.server.ProxyServer;
import io.nftproxy.proxy.sync.Generation;

/**
 * What a hostile operator does to our table, and the daemon puts right: the table deleted, the
 * whole ruleset flushed, a foreign chain and a foreign rule added inside our table. After each,
 * traffic to the service flows again, our table holds only what we put there, and one change
 * by someone else counts as one repair, not one per kernel event.
 */
class DriftRepairKernelTest {
    private static final Duration REPAIR = Duration.ofSeconds(20);

    @Test
    void everyForeignChangeToOurTableIsUndone(@TempDir Path dir) throws Exception {
        try (Topology topo = new Topology()) {
            topo.serve("10.244.1.2", 8080);
            new Manifests()
                    .service("web", "10.96.0.10", "[{name: http, port: 80, targetPort: 8080}]")
                    .slice("web", "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}]", "10.244.1.2@node-a")
                    .write(dir, "services.yaml");
            try (Daemon d = Daemon.start(topo, dir, OperationsKernelTest.config(), Daemon.anyPort(), Daemon.anyPort())) {
                ProxyServer server = d.server();
                Topology.eventually(REPAIR, () -> answered(topo), "the service answers after the first sync");
                String ours = topo.node.exec("nft", "list", "table", "ip", "nftproxy");

                topo.node.exec("nft", "delete", "table", "ip", "nftproxy");
                Topology.eventually(REPAIR, () -> answered(topo), "the deleted table is rebuilt");
                double repairs = repairs(server);
                assertTrue(repairs >= 1 && repairs <= 2, "one deletion (dozens of events) is one repair, not " + repairs);

                topo.node.exec("nft", "flush", "ruleset");
                Topology.eventually(REPAIR, () -> answered(topo), "the table is rebuilt after 'nft flush ruleset'");

                topo.node.execInput("""
                        add chain ip nftproxy evil { type filter hook prerouting priority -300; policy accept; }
                        add rule ip nftproxy evil tcp dport 80 drop
                        """, "nft", "-f", "-");
                Topology.eventually(REPAIR, () -> !topo.node.exec("nft", "list", "table", "ip", "nftproxy").contains("evil"),
                        "a foreign base chain inside our table is removed");
                assertTrue(answered(topo));
                double repaired = repairs(server);

                // The repairs took the table over beside itself, under the other generation's
                // names; the loop takes the table's own names back (docs/ruleset.md's) with one
                // more takeover, which is not a repair.
                Topology.eventually(REPAIR, () -> {
                    String listing = topo.node.exec("nft", "list", "table", "ip", "nftproxy");
                    return listing.contains("chain services ") && !listing.contains(Generation.SUFFIX);
                }, "the table's own names again");
                assertTrue(answered(topo));
                assertEquals(repaired, repairs(server), "taking the names back is not counted as a repair");
                topo.node.exec("nft", "insert", "rule", "ip", "nftproxy", "services", "tcp", "dport", "80", "drop");
                Topology.eventually(REPAIR, () -> {
                    String listing = topo.node.exec("nft", "list", "table", "ip", "nftproxy");
                    return !listing.contains("dport 80 drop") && !listing.contains(Generation.SUFFIX);
                }, "a foreign rule in one of our chains is removed, and the table has its own names again");
                assertTrue(answered(topo));
                assertEquals(shape(ours), shape(topo.node.exec("nft", "list", "table", "ip", "nftproxy")),
                        "after the repairs our table has the chains, sets and rules it had after the first sync");
                assertEquals(0.0, OperationsKernelTest.scrape(server.metricsPort())
                        .get("kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family=\"IPv4\"}"), "no repair failed");
            }
        }
    }

    private static boolean answered(Topology topo) throws Exception {
        return topo.tcp(topo.node, null, "10.96.0.10", 80).result() == Topology.Outcome.Result.ANSWERED;
    }

    /** The table's lines without element lists (whose order is the kernel's hash order), sorted. */
    private static List<String> shape(String listing) {
        return listing.lines().map(String::trim).filter(l -> !l.isEmpty() && !l.startsWith("elements") && !l.matches("^[0-9a-f.:, ]+[,}]?$"))
                .sorted().toList();
    }

    private static double repairs(ProxyServer server) throws Exception {
        return OperationsKernelTest.scrape(server.metricsPort()).get("nftproxy_drift_repairs_total");
    }
}
