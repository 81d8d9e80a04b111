package io.nftproxy.proxy.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.Syncer;

/** The service a packet was addressed to, named from the comments of what a sync put in the (fake) kernel. */
class KernelServiceNamesTest {
    static InetAddress ip(String s) {
        return Inet.parse(s);
    }

    static TracedPacket to(int proto, String dst, int port) {
        return new TracedPacket(proto, ip(dst.contains(":") ? "fd00::99" : "10.244.2.100"), 40000, ip(dst), port);
    }

    @Test
    void frontendsAndNodePortsAreNamedFromTheirElements() throws Exception {
        ServicePortName web = new ServicePortName("shop", "web", "http", Protocol.TCP);
        ServicePortName dns = new ServicePortName("kube-system", "dns", "", Protocol.UDP);
        ServicePortName empty = new ServicePortName("shop", "empty", "http", Protocol.TCP);
        ProxyState state = new ProxyState(Map.of(
                web, ServicePort.builder(web, 80).clusterIPs(List.of(ip("10.96.0.10"))).nodePort(30080)
                        .externalIPs(List.of(ip("203.0.113.7"))).build(),
                dns, ServicePort.builder(dns, 53).clusterIPs(List.of(ip("10.96.0.53"), ip("fd00:96::53"))).build(),
                empty, ServicePort.builder(empty, 80).clusterIPs(List.of(ip("10.96.0.11"))).build()),
                Map.of(web, List.of(Endpoint.builder(ip("10.244.1.2"), 8080).node("node-b").build()),
                        dns, List.of(Endpoint.builder(ip("10.244.1.5"), 53).node("node-b").build(),
                                Endpoint.builder(ip("fd00:244::5"), 53).node("node-b").build())),
                new NodeInfo("node-a", null, List.of(ip("192.168.50.2")), false));
        ProxyConfig cfg = ProxyConfig.builder("node-a").nodeIPs(List.of(ip("192.168.50.2")))
                .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).minSyncPeriod(Duration.ZERO).build();
        FakeNfTables kernel = new FakeNfTables();
        new Syncer(kernel, new NftRenderer(cfg), "nftproxy").sync(state, null);
        KernelServiceNames names = new KernelServiceNames(kernel, "nftproxy");

        assertEquals("service shop/web port http (tcp) via its ClusterIP", names.describe(to(6, "10.96.0.10", 80)));
        assertEquals("service shop/web port http (tcp) via its external or load-balancer IP",
                names.describe(to(6, "203.0.113.7", 80)));
        assertEquals("service shop/web port http (tcp) via its NodePort", names.describe(to(6, "192.168.50.2", 30080)));
        assertEquals("service kube-system/dns port (unnamed) (udp) via its ClusterIP", names.describe(to(17, "fd00:96::53", 53)));
        assertEquals("service shop/empty port http (tcp) via its ClusterIP", names.describe(to(6, "10.96.0.11", 80)),
                "a service port without endpoints, from the set that rejects for it");
        assertNull(names.describe(to(6, "10.96.0.10", 81)), "no service port there");
        assertNull(new KernelServiceNames(new FakeNfTables(), "nftproxy").describe(to(6, "10.96.0.10", 80)),
                "no table of ours: nothing to name from");
    }
}
