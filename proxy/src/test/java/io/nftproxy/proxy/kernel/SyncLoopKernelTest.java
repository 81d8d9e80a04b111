package io.nftproxy.proxy.kernel;

import static io.nftproxy.sandbox.Sandbox.Outcome.Result.ANSWERED;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.sandbox.Netns;
import io.nftproxy.proxy.source.ManifestSource;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.proxy.sync.SyncLoop;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;
import io.nftproxy.testkit.TestNetns;

/** The running proxy: a watched manifest directory, partial syncs, updates between flows, bad input. */
class SyncLoopKernelTest {
    static ProxyConfig config(String table) {
        return ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse(Topology.NODE_IP)))
                .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16")))
                .minSyncPeriod(Duration.ofMillis(50)).table(table).build();
    }

    @Test
    void watchedManifestsReachTheKernelThroughPartialSyncs(@TempDir Path dir) throws Exception {
        try (Topology topo = new Topology()) {
            for (String ep : List.of("10.244.1.2", "10.244.1.3", "10.244.1.4")) {
                topo.serve(ep, 8080);
            }
            Netns client = topo.pod("10.244.2.100");
            String http = "[{name: http, port: 8080, protocol: TCP}]";
            new Manifests().service("web", "10.96.0.10", "[{name: http, port: 80}]")
                    .slice("web", "a", "IPv4", http, "10.244.1.2@node-b").write(dir, "web.yaml");

            ObjectStore store = new ObjectStore("node-a");
            List<SyncResult> results = new CopyOnWriteArrayList<>();
            SyncListener record = new SyncListener() {
                @Override
                public void synced(SyncResult r, long nanos, ObjectStore.Snapshot s) {
                    results.add(r);
                }
            };
            try (NftClient nft = NftClient.open(topo.node.ns());
                 ManifestSource source = new ManifestSource(dir, store)) {
                Syncer syncer = new Syncer(nft, new NftRenderer(config("nftproxy")), "nftproxy");
                try (SyncLoop loop = new SyncLoop(store, syncer, Duration.ofMillis(50), Duration.ofMinutes(5), record)) {
                    source.start(true);
                    loop.start();
                    Topology.eventually(Duration.ofSeconds(20), () -> "10.244.1.2:8080".equals(
                            topo.tcp(client, "10.244.2.100", "10.96.0.10", 80).answeredBy()), "first sync serves web");
                    assertTrue(results.get(0).full(), "the first sync is full");

                    // an endpoint is added: both answer
                    int before = results.size();
                    new Manifests().service("web", "10.96.0.10", "[{name: http, port: 80}]")
                            .slice("web", "a", "IPv4", http, "10.244.1.2@node-b", "10.244.1.3@node-b").write(dir, "web.yaml");
                    Set<String> seen = new HashSet<>();
                    Topology.eventually(Duration.ofSeconds(20), () -> {
                        seen.add(topo.tcp(client, "10.244.2.100", "10.96.0.10", 80).answeredBy());
                        return seen.contains("10.244.1.3:8080");
                    }, "the added endpoint answers");
                    // The kernel serves the change as soon as it is committed, a moment before the
                    // loop reports the sync: wait for the report.
                    Topology.eventually(Duration.ofSeconds(5), () -> results.size() > before, "the sync is reported");
                    for (SyncResult partial : results.subList(before, results.size())) {
                        assertFalse(partial.full(), "an endpoint change is a partial sync");
                        assertTrue(partial.commit().operations() < 12, "only the service's chain and elements: "
                                + partial.commit().operations() + " operations");
                    }

                    // the first endpoint goes away; a new service file appears
                    new Manifests().service("web", "10.96.0.10", "[{name: http, port: 80}]")
                            .slice("web", "a", "IPv4", http, "10.244.1.3@node-b").write(dir, "web.yaml");
                    new Manifests().service("api", "10.96.0.11", "[{name: http, port: 80}]")
                            .slice("api", "a", "IPv4", http, "10.244.1.4@node-b").write(dir, "api.yaml");
                    Topology.eventually(Duration.ofSeconds(20), () -> "10.244.1.4:8080".equals(
                            topo.tcp(client, "10.244.2.100", "10.96.0.11", 80).answeredBy()), "the new service answers");
                    for (int i = 0; i < 10; i++) {
                        assertEquals("10.244.1.3:8080", topo.tcp(client, "10.244.2.100", "10.96.0.10", 80).answeredBy());
                    }

                    // a file is removed: its service is gone, and its ClusterIP now rejects like any unused one
                    Files.delete(dir.resolve("api.yaml"));
                    Topology.eventually(Duration.ofSeconds(20), () ->
                            topo.tcp(client, "10.244.2.100", "10.96.0.11", 80).result() != ANSWERED, "api is gone");

                    // the partial syncs left exactly what a full sync of the final state writes, once
                    // the loop has taken away what the changes kept for connections crossing them
                    // (render/Transitions: a sync of its own when their time has passed)
                    String full;
                    try (TestNetns fresh = TestNetns.create("nftp-fresh"); NftClient other = NftClient.open(fresh.ns())) {
                        new Syncer(other, new NftRenderer(config("nftproxy")), "nftproxy").sync(store.snapshot().state(), null);
                        full = other.readTable(Family.IP, "nftproxy").toString();
                    }
                    Topology.eventually(Duration.ofSeconds(10), () -> full.equals(nft.readTable(Family.IP, "nftproxy").toString()),
                            "the partial syncs' table becomes the full sync's");
                    assertEquals(full, nft.readTable(Family.IP, "nftproxy").toString());
                }
            }
        }
    }

    @Test
    void badObjectsAreNamedAndEverythingElseWorks(@TempDir Path dir) throws Exception {
        try (Topology topo = new Topology()) {
            topo.serve("10.244.1.2", 8080);
            topo.serve("10.244.1.3", 8080);
            Netns client = topo.pod("10.244.2.100");
            String http = "[{name: http, port: 8080, protocol: TCP}]";
            new Manifests()
                    .service("good", "10.96.0.10", "[{name: http, port: 80}]")
                    .slice("good", "a", "IPv4", http, "10.244.1.2@node-b", "not-an-ip@node-b", "10.244.1.3@node-b")
                    .service("bad-ip", "10.96.0.300", "[{name: http, port: 80}]")
                    .service("bad-port", "10.96.0.12", "[{name: http, port: 70000}]")
                    .service("bad-proto", "10.96.0.13", "[{name: http, port: 80, protocol: ICMP}]")
                    .write(dir, "services.yaml");
            Files.writeString(dir.resolve("broken.yaml"), "apiVersion: v1\nkind: Service\nmetadata: {name: [oops\n");
            // A file it cannot use at all makes the one-shot end with 1, after syncing the rest.
            ProxyRun.Result r = ProxyRun.once(1, topo, dir);
            assertTrue(r.err().contains("Service default/bad-ip: invalid cluster IP '10.96.0.300'"), r.err());
            assertTrue(r.err().contains("Service default/bad-port: port 'http': port 70000 is out of range 1-65535"), r.err());
            assertTrue(r.err().contains("Service default/bad-proto: port 'http': unknown protocol 'ICMP'"), r.err());
            assertTrue(r.err().contains("EndpointSlice default/good-a: invalid endpoint address 'not-an-ip' (skipped)"), r.err());
            assertTrue(r.err().contains("file broken.yaml: does not parse"), r.err());
            assertTrue(r.err().contains("1 file of manifests in " + dir + " could not be used"), r.err());
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < 30; i++) {
                Topology.Outcome o = topo.tcp(client, "10.244.2.100", "10.96.0.10", 80);
                assertEquals(ANSWERED, o.result());
                seen.add(o.answeredBy());
            }
            assertEquals(Set.of("10.244.1.2:8080", "10.244.1.3:8080"), seen, "the good service and its good endpoints work");
            assertEquals(TIMEOUT, topo.tcp(client, "10.244.2.100", "10.96.0.12", 80).result(),
                    "a refused service is not programmed: its address is an unallocated service IP, dropped");
        }
    }
}
