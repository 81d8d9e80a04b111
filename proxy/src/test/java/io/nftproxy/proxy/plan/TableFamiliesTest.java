package io.nftproxy.proxy.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * Which families' tables a node holds, as a table: what is configured, what the Node object and
 * the cluster's ServiceCIDRs say, and the services' ClusterIPs → the families. Each cell is a
 * list separated by {@code |}, empty for none.
 */
class TableFamiliesTest {
    @ParameterizedTest(name = "[{index}] {8}")
    @CsvSource(delimiter = ';', value = {
            // node IPs; Node addresses; cluster CIDRs; service CIDRs; ServiceCIDR objects; NodePort CIDRs; pod CIDRs; ClusterIPs; families
            ";;;;;;;;V4",
            "192.168.50.2;;;;;;;;V4",
            ";192.168.50.2;;;;;;10.96.0.1;V4",
            "fd00::2;;;;;;;;V6",
            ";fd00::2;;;;;;;V6",
            "::1;;;;;;;;V4",
            "192.168.50.2|fd00::2;;;;;;;;V4|V6",
            "192.168.50.2;fd00::2;;;;;;;V4|V6",
            "192.168.50.2;;fd00:244::/64;;;;;;V4|V6",
            "192.168.50.2;;;fd00:96::/112;;;;;V4|V6",
            "192.168.50.2;;;;fd00:96::/112;;;;V4|V6",
            "192.168.50.2;;;;;fd00::/64;;;V4|V6",
            "192.168.50.2;;;;;;fd00:244:1::/80;;V4|V6",
            "192.168.50.2;;;;;;;10.96.0.1|fd00:96::1;V4|V6",
            "fd00::2;;;;;;;10.96.0.1;V4|V6",
            "fd00::2;;;;;;;fd00:96::1;V6",
    })
    void aFamilysTableWhileTheNodeOrAServiceHasIt(String nodeIPs, String nodeAddresses, String clusterCIDRs, String serviceCIDRs,
                                                   String serviceCidrObjects, String nodePortCIDRs, String podCIDRs,
                                                   String clusterIPs, String families) {
        ProxyConfig config = ProxyConfig.builder("node-a").nodeIPs(addresses(nodeIPs)).clusterCIDRs(cidrs(clusterCIDRs))
                .serviceCIDRs(cidrs(serviceCIDRs)).nodePortAddresses(cidrs(nodePortCIDRs)).build();
        NodeInfo node = new NodeInfo("node-a", null, addresses(nodeAddresses), false, cidrs(podCIDRs));
        Map<ServicePortName, ServicePort> services = new HashMap<>();
        if (clusterIPs != null) {
            ServicePort port = ServicePort.builder(new ServicePortName("ns", "svc", "http", Protocol.TCP), 80)
                    .clusterIPs(addresses(clusterIPs)).build();
            services.put(port.id(), port);
        }
        ProxyState state = new ProxyState(services, Map.of(), node, cidrs(serviceCidrObjects));
        Map<IpFamily, Integer> ports = new EnumMap<>(IpFamily.class);
        services.values().forEach(svc -> TableFamilies.count(ports, svc, +1));
        assertEquals(families(families), TableFamilies.of(config, state, ports));
    }

    @Test
    void portsAreCountedInAndOutOfTheirFamilies() {
        ServicePort dual = ServicePort.builder(new ServicePortName("ns", "dual", "http", Protocol.TCP), 80)
                .clusterIPs(addresses("10.96.0.1|fd00:96::1")).build();
        ServicePort v4 = ServicePort.builder(new ServicePortName("ns", "v4", "http", Protocol.TCP), 80)
                .clusterIPs(addresses("10.96.0.2")).build();
        Map<IpFamily, Integer> ports = new EnumMap<>(IpFamily.class);
        TableFamilies.count(ports, dual, +1);
        TableFamilies.count(ports, v4, +1);
        assertEquals(Map.of(IpFamily.V4, 2, IpFamily.V6, 1), ports);
        TableFamilies.count(ports, dual, -1);
        TableFamilies.count(ports, null, -1);
        assertEquals(Map.of(IpFamily.V4, 1), ports, "the last port of a family leaves no count behind");
        ProxyState state = new ProxyState(Map.of(), Map.of(), new NodeInfo("node-a", null, addresses("192.168.50.2"), false));
        assertEquals(EnumSet.of(IpFamily.V4), TableFamilies.of(ProxyConfig.builder("node-a").build(), state, ports));
    }

    static List<InetAddress> addresses(String cell) {
        return cell == null ? List.of() : Stream.of(cell.split("\\|")).map(Inet::parse).toList();
    }

    static List<Cidr> cidrs(String cell) {
        return cell == null ? List.of() : Stream.of(cell.split("\\|")).map(Cidr::parse).toList();
    }

    static EnumSet<IpFamily> families(String cell) {
        return Stream.of(cell.split("\\|")).map(IpFamily::valueOf)
                .collect(Collectors.toCollection(() -> EnumSet.noneOf(IpFamily.class)));
    }
}
