package io.nftproxy.proxy.kernel;

import static io.nftproxy.sandbox.Sandbox.Outcome.Result.ANSWERED;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.render.TableNames;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;

/**
 * loadBalancerSourceRanges as elements of one interval set of concatenations, with real
 * connections from the outside network (192.168.50.10) while the ranges change through partial
 * syncs: nested ranges (which the kernel would refuse as overlapping unless merged), a range
 * growing around the one before it (refused if the new element were added before the old one
 * went), ranges that leave the client out, and the service going. Every change of the ranges is
 * elements only; the shard (the set, its chain) is there while some IP of it has ranges, and
 * {@code nft list} reads the set as an operator would.
 */
class SourceRangesKernelTest {
    static final ServicePortName ID = new ServicePortName("default", "lb", "http", Protocol.TCP);
    static final String LB_IP = "203.0.113.40";

    static ProxyState state(String... ranges) {
        if (ranges.length == 0) {
            return new ProxyState(Map.of(), Map.of(), NodeInfo.named("node-a"));
        }
        ServicePort svc = ServicePort.builder(ID, 80).clusterIPs(List.of(Inet.parse("10.96.0.40"))).nodePort(30040)
                .loadBalancerIPs(List.of(Inet.parse(LB_IP)))
                .loadBalancerSourceRanges(List.of(ranges).stream().map(Cidr::parse).toList()).build();
        return new ProxyState(Map.of(ID, svc), Map.of(ID, List.of(Endpoint.ready(Inet.parse("10.244.1.2"), 8080, "node-b"))),
                NodeInfo.named("node-a"));
    }

    /** The shard of the load-balancer IP's ranges: its last byte, 40. */
    static String allowed(Topology topo) throws Exception {
        return topo.node.exec("nft", "list", "set", "ip", "nftproxy", TableNames.FIREWALL_ALLOW + 40);
    }

    @Test
    void rangesChangeAsElementsAndFilterRealConnections() throws Exception {
        ProxyConfig cfg = ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse(Topology.NODE_IP)))
                .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16")))
                .build();
        try (Topology topo = new Topology(); NftClient nft = NftClient.open(topo.node.ns())) {
            topo.serve("10.244.1.2", 8080);
            Syncer syncer = new Syncer(nft, new NftRenderer(cfg), "nftproxy");
            // Nested: the /29 inside the /24, one merged range. The /24 holds the node's address,
            // so the load-balancer IP is let in as a source too (as kube-proxy does).
            syncer.sync(state("192.168.50.0/24", "192.168.50.8/29"), null);
            assertTrue(allowed(topo).contains(LB_IP + " . tcp . 80 . 192.168.50.0/24"), allowed(topo));
            assertFalse(allowed(topo).contains("192.168.50.8"), "the nested range merged away: " + allowed(topo));
            assertEquals(ANSWERED, topo.tcp(topo.ext, null, LB_IP, 80).result(), "a source inside the ranges passes");

            SyncResult grown = syncer.sync(state("192.168.0.0/16"), Set.of(ID));
            assertEquals(0, grown.changedChains(), "a range changed is elements only");
            assertTrue(allowed(topo).contains(LB_IP + " . tcp . 80 . 192.168.0.0/16"), allowed(topo));
            assertEquals(ANSWERED, topo.tcp(topo.ext, null, LB_IP, 80).result(), "still inside");

            SyncResult closed = syncer.sync(state("10.0.0.0/8", "172.16.0.0/12"), Set.of(ID));
            assertEquals(0, closed.changedChains());
            assertEquals(TIMEOUT, topo.tcp(topo.ext, null, LB_IP, 80).result(), "a source outside the ranges is dropped");
            assertEquals(ANSWERED, topo.tcp(topo.ext, null, Topology.NODE_IP, 30040).result(),
                    "the service's NodePort is not filtered");

            // The service goes with the shard's last ranges: its set and chain go, and the check.
            SyncResult gone = syncer.sync(state(), Set.of(ID));
            assertTrue(gone.changedChains() > 0, "the shard's chain and the check went");
            String chains = topo.node.exec("nft", "list", "chains", "ip");
            assertFalse(chains.contains("firewall-shard-40") || chains.contains(TableNames.FIREWALL_CHECK), chains);
            assertFalse(topo.node.exec("nft", "list", "sets", "ip").contains(TableNames.FIREWALL_ALLOW + 40));
            assertFalse(topo.node.exec("nft", "list", "set", "ip", "nftproxy", TableNames.FIREWALL_IPS).contains(LB_IP));
        }
    }
}
