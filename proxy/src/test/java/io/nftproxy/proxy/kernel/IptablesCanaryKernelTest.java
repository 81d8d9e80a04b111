package io.nftproxy.proxy.kernel;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.events.EventRecorder;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.iptables.IptablesSyncer;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.server.ProxyServer;
import io.nftproxy.proxy.source.ManifestSource;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.sandbox.Netns;

/**
 * The iptables reference backend, as kube-proxy's iptables mode: someone flushes and deletes the
 * node's iptables chains (a firewall restarting, iptables -F -X); within a sync period the canary
 * chains are found gone and everything is put back, and the service answers again.
 */
class IptablesCanaryKernelTest {
    @Test
    void flushedChainsComeBackWithinASyncPeriod(@TempDir Path dir) throws Exception {
        try (Topology topo = new Topology()) {
            topo.serve("10.244.1.2", 8080);
            Netns client = topo.pod("10.244.2.100");
            new Manifests().service("web", "10.96.0.10", "[{name: http, port: 80}]")
                    .slice("web", "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}]", "10.244.1.2@node-b")
                    .write(dir, "web.yaml");
            ProxyConfig cfg = ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse(Topology.NODE_IP)))
                    .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).minSyncPeriod(Duration.ofMillis(50))
                    .syncPeriod(Duration.ofSeconds(1)).build();
            ObjectStore store = new ObjectStore("node-a");
            IptablesSyncer ipt = new IptablesSyncer(cfg, topo.node.name());
            try (ManifestSource source = new ManifestSource(dir, store);
                 ProxyServer server = new ProxyServer(cfg, store, ipt, null, topo.node.ns(), null, null, new SyncListener() { },
                         EventRecorder.NONE)) {
                source.start(true);
                server.start();
                Topology.eventually(Duration.ofSeconds(20), () -> "10.244.1.2:8080".equals(
                        topo.tcp(client, "10.244.2.100", "10.96.0.10", 80).answeredBy()), "the first sync serves web");
                assertTrue(ipt.canariesPresent());

                for (String table : List.of("nat", "filter", "mangle")) {
                    topo.node.exec("iptables", "-w", "-t", table, "-F");
                    topo.node.exec("iptables", "-w", "-t", table, "-X");
                }
                assertFalse(topo.node.exec("iptables-save").contains("KUBE-"), "everything of ours is gone");
                Topology.eventually(Duration.ofSeconds(20), () -> "10.244.1.2:8080".equals(
                        topo.tcp(client, "10.244.2.100", "10.96.0.10", 80).answeredBy()), "web answers again");
                assertTrue(ipt.canariesPresent());
                assertTrue(topo.node.exec("iptables-save", "-t", "nat").contains("-A PREROUTING -m comment --comment"
                        + " \"kubernetes service portals\" -j KUBE-SERVICES"), "the jumps are back too");
            } finally {
                ipt.cleanup();
            }
        }
    }
}
