package io.nftproxy.proxy.iptables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/** The reference renderer, like the nftables one, leaves out a service whose rendering fails and nothing else. */
class IptablesRendererTest {
    static ServicePort svc(ServicePortName id, String ip, int nodePort) {
        return ServicePort.builder(id, 80).clusterIPs(List.of(Inet.parse(ip))).nodePort(nodePort).build();
    }

    @Test
    void aFailureMidwayThroughOneServiceTakesBackWhatItWroteAndLeavesOnlyItOut() {
        ServicePortName fine = new ServicePortName("ns", "fine", "http", Protocol.TCP);
        ServicePortName broken = new ServicePortName("ns", "broken", "http", Protocol.TCP);
        Map<ServicePortName, ServicePort> services = new HashMap<>();
        services.put(fine, svc(fine, "fd00::10", 30010));
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>();
        eps.put(fine, List.of(Endpoint.ready(Inet.parse("fd00:1::1"), 8080, "node-a")));
        NodeInfo node = NodeInfo.named("node-a");
        IptablesRenderer renderer = new IptablesRenderer(IptablesSyncerTest.CONFIG);
        IptablesRenderer.Output without = renderer.render(new ProxyState(services, eps, node), IpFamily.V6);

        // The broken service's second endpoint has no address: its cluster-IP rules, its chain and
        // its first endpoint's chain are written before rendering fails on the second.
        services.put(broken, svc(broken, "fd00::11", 30011));
        InetAddress none = null;
        eps.put(broken, Arrays.asList(Endpoint.ready(Inet.parse("fd00:1::2"), 8080, "node-a"),
                Endpoint.ready(none, 8080, "node-b")));
        IptablesRenderer.Output with = renderer.render(new ProxyState(services, eps, node), IpFamily.V6);

        assertEquals(1, with.rejected().size(), with.rejected().toString());
        assertTrue(with.rejected().get(0).startsWith("ns/broken:http/tcp: internal error (please report it): NullPointerException"),
                with.rejected().get(0));
        assertEquals(without.restore(), with.restore(), "nothing of the broken service is left, everything else is as it was");
        assertEquals(without.natChains(), with.natChains());
        assertEquals(without.filterChains(), with.filterChains());
        assertTrue(with.restore().contains("fd00::10/128"), "the fine service is there");
    }
}
