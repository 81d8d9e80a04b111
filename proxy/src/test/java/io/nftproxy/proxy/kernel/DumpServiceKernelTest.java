package io.nftproxy.proxy.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

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
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * {@code nftproxy dump --service NAMESPACE/NAME} tells what the kernel does for a service from
 * our tables alone: synced by the daemon's path into a namespace, then read back through the
 * command with nothing else to go on.
 */
class DumpServiceKernelTest {
    static final ProxyConfig CFG = ProxyConfig.builder("node-a")
            .nodeIPs(List.of(Inet.parse("192.168.50.2"), Inet.parse("fd00:50::2")))
            .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"), Cidr.parse("fd00:244::/64")))
            .serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16"), Cidr.parse("fd00:96::/112"))).build();

    static ServicePortName id(String name) {
        return new ServicePortName("shop", name, "http", Protocol.TCP);
    }

    static List<Endpoint> endpoints(int n, int local, boolean dual) {
        List<Endpoint> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String node = i < local ? "node-a" : "node-b";
            out.add(Endpoint.ready(Inet.parse("10.244." + (1 + i / 250) + "." + (2 + i % 250)), 8080, node));
            if (dual) {
                out.add(Endpoint.ready(Inet.parse("fd00:244::" + Integer.toHexString(2 + i)), 8080, node));
            }
        }
        return out;
    }

    @Test
    void aServiceAsTheKernelHoldsIt() throws Exception {
        Kernel.require();
        Map<ServicePortName, ServicePort> services = new LinkedHashMap<>();
        Map<ServicePortName, List<Endpoint>> eps = new LinkedHashMap<>();
        services.put(id("web"), ServicePort.builder(id("web"), 80).clusterIPs(List.of(Inet.parse("10.96.0.10"), Inet.parse("fd00:96::10")))
                .nodePort(30010).build());
        eps.put(id("web"), endpoints(3, 0, true));
        services.put(id("lb"), ServicePort.builder(id("lb"), 443).clusterIPs(List.of(Inet.parse("10.96.0.11")))
                .loadBalancerIPs(List.of(Inet.parse("203.0.113.11"))).loadBalancerSourceRanges(List.of(Cidr.parse("192.0.2.0/24")))
                .externalPolicyLocal(true).affinitySeconds(600).build());
        eps.put(id("lb"), endpoints(3, 1, false));
        services.put(id("empty"), ServicePort.builder(id("empty"), 80).clusterIPs(List.of(Inet.parse("10.96.0.12"))).build());
        services.put(id("big"), ServicePort.builder(id("big"), 80).clusterIPs(List.of(Inet.parse("10.96.0.13"))).build());
        eps.put(id("big"), endpoints(NftRenderer.MAX_PLAIN_PICK + 1, 0, false));
        services.put(id("sticky-big"), ServicePort.builder(id("sticky-big"), 80).clusterIPs(List.of(Inet.parse("10.96.0.14")))
                .affinitySeconds(600).build());
        eps.put(id("sticky-big"), endpoints(NftRenderer.MAX_PLAIN_PICK + 1, 0, false));
        NodeInfo node = new NodeInfo("node-a", null, List.of(Inet.parse("192.168.50.2"), Inet.parse("fd00:50::2")), false);
        try (TestNetns ns = TestNetns.create("nftp-dumpsvc"); NftClient nft = NftClient.open(ns.ns())) {
            SyncResult r = new Syncer(nft, new NftRenderer(CFG), "nftproxy").sync(new ProxyState(services, eps, node), null);
            assertTrue(r.rejectedServices().isEmpty(), r.rejectedServices().toString());

            ProxyRun.Result web = ProxyRun.cli("dump", "--service", "shop/web", "--netns", ns.name());
            assertEquals(0, web.exit(), web.err());
            assertTrue(web.out().startsWith("service shop/web, as table nftproxy holds it:\n"), web.out());
            assertTrue(web.out().contains("""
                      10.96.0.10 tcp 80 (ClusterIP, port http)
                        3 endpoints: 0 10.244.1.2:8080, 1 10.244.1.3:8080, 2 10.244.1.4:8080
                    """), web.out());
            assertTrue(web.out().contains("""
                      [fd00:96::10] tcp 80 (ClusterIP, port http)
                        3 endpoints: 0 [fd00:244::2]:8080, 1 [fd00:244::3]:8080, 2 [fd00:244::4]:8080
                    """), "both families: " + web.out());
            assertTrue(web.out().contains("""
                      NodePort tcp 30010 (NodePort, port http)
                        3 endpoints: 0 10.244.1.2:8080, 1 10.244.1.3:8080, 2 10.244.1.4:8080
                        masqueraded (the source is SNATed)
                    """), web.out());

            String lb = ProxyRun.cli("dump", "--service", "shop/lb", "--netns", ns.name()).out();
            assertTrue(lb.contains("""
                      203.0.113.11 tcp 443 (external or load-balancer IP, port http)
                        externalTrafficPolicy Local: from outside, 1 endpoint on this node: 0 10.244.1.2:8080
                        from this node and its pods, 3 endpoints: 0 10.244.1.2:8080, 1 10.244.1.3:8080, 2 10.244.1.4:8080
                        ClientIP affinity: 600 s
                        ClientIP affinity (this node's endpoints): 600 s
                        loadBalancerSourceRanges: 192.0.2.0/24
                    """), lb);
            assertTrue(lb.contains("10.96.0.11 tcp 443 (ClusterIP, port http)\n    3 endpoints:"), lb);

            String empty = ProxyRun.cli("dump", "--service", "shop/empty", "--netns", ns.name()).out();
            assertTrue(empty.contains("10.96.0.12 tcp 80 (ClusterIP, port http)\n    rejected: the service port has no endpoints\n"), empty);

            // Past 1,024 endpoints, sent to a block of the tree by a verdict; with affinity, chains of its own.
            String big = ProxyRun.cli("dump", "--service", "shop/big", "--netns", ns.name()).out();
            assertTrue(big.contains("10.96.0.13 tcp 80 (ClusterIP, port http)\n    1025 endpoints: 0 10.244.1.2:8080, 1 "), big);
            assertTrue(big.contains(", 1024 10.244.5.26:8080\n"), big);
            assertFalse(big.contains("of them in") || big.contains("chains of its own"), big);
            String stickyBig = ProxyRun.cli("dump", "--service", "shop/sticky-big", "--netns", ns.name()).out();
            assertTrue(stickyBig.contains("chains of its own: goto svc-shop/sticky-big/tcp/80"), stickyBig);

            ProxyRun.Result none = ProxyRun.cli("dump", "--service", "shop/none", "--netns", ns.name());
            assertEquals(3, none.exit());
            assertTrue(none.err().contains("names service shop/none"), none.err());
            ProxyRun.Result bad = ProxyRun.cli("dump", "--service", "shop", "--netns", ns.name());
            assertEquals(2, bad.exit());
            assertEquals("nftproxy: --service shop: not NAMESPACE/NAME\n", bad.err());
        }
    }
    /**
     * With --service-counters and --endpoint-counters, the frontend's new connections and each
     * endpoint's: a connection from the namespace itself to the ClusterIP (routed to a veth; it
     * goes nowhere after the DNAT, but the lookups that picked it counted it).
     */
    @Test
    void countersAsTheKernelCountedThem() throws Exception {
        Kernel.require();
        ProxyConfig counting = ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse("192.168.50.2")))
                .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16")))
                .serviceCounters(true).endpointCounters(true).build();
        ServicePort web = ServicePort.builder(id("web"), 80).clusterIPs(List.of(Inet.parse("10.96.0.10"))).build();
        NodeInfo node = new NodeInfo("node-a", null, List.of(Inet.parse("192.168.50.2")), false);
        try (TestNetns ns = TestNetns.create("nftp-dumpcnt"); NftClient nft = NftClient.open(ns.ns())) {
            new Syncer(nft, new NftRenderer(counting), "nftproxy").sync(
                    new ProxyState(Map.of(web.id(), web), Map.of(web.id(), endpoints(1, 0, false)), node), null);
            ns.exec("ip", "link", "add", "d0", "type", "veth", "peer", "name", "d1");
            ns.exec("ip", "link", "set", "d0", "up");
            ns.exec("ip", "link", "set", "d1", "up");
            ns.exec("ip", "addr", "add", "10.96.255.1/16", "dev", "d0");
            ns.exec("bash", "-c", "timeout 2 bash -c 'echo > /dev/tcp/10.96.0.10/80' || true");
            String out = ProxyRun.cli("dump", "--service", "shop/web", "--netns", ns.name()).out();
            // Each SYN that found no conntrack entry went through the lookups (a retransmitted one too:
            // the first never left), so the count is one or more, the same for the frontend and its endpoint.
            java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                    "    1 endpoint: 0 10\\.244\\.1\\.2:8080 \\((\\d+)\\); (\\d+) new connections counted\n").matcher(out);
            assertTrue(m.find(), out);
            assertEquals(m.group(1), m.group(2), out);
            assertTrue(Integer.parseInt(m.group(2)) >= 1, out);
        }
    }
}
