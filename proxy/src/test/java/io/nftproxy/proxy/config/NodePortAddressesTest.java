package io.nftproxy.proxy.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;

/**
 * Where NodePorts are served, per family, as kube-proxy's NewNodePortAddresses decides it (after
 * kubeadm's "primary" is turned into the node's IPs): one answer for both backends and the
 * healthCheckNodePort servers.
 */
class NodePortAddressesTest {
    static List<InetAddress> ips(String s) {
        return s.isEmpty() ? List.of() : Arrays.stream(s.split(" ")).map(Inet::parse).toList();
    }

    static List<Cidr> cidrs(String s) {
        return s.isEmpty() ? List.of() : Arrays.stream(s.split(" ")).map(Cidr::parse).toList();
    }

    @ParameterizedTest(name = "node-ip [{0}], Node [{1}], nodePortAddresses [{2}]: IPv4 {3}, IPv6 {4}")
    @CsvSource(delimiter = '|', value = {
        // primary: the node's IP of each family; the flag's first, the Node object's for the other family
        "192.168.50.2 | 192.168.50.2 fd00::2 |                      | 192.168.50.2/32 | fd00::2/128",
        "192.168.50.2 | 10.0.0.5 fd00::2     |                      | 192.168.50.2/32 | fd00::2/128",
        "             | 10.0.0.5 10.0.0.6    |                      | 10.0.0.5/32     | ::/0",
        // a family the node has no IP of: every address of it, as kube-proxy (not none)
        "             |                      |                      | 0.0.0.0/0       | ::/0",
        "127.0.0.1    | 10.0.0.5             |                      | 10.0.0.5/32     | ::/0",
        // CIDRs: those of the family; none of it: every address of it
        "192.168.50.2 | 192.168.50.2 fd00::2 | 10.0.0.0/8           | 10.0.0.0/8      | ::/0",
        "             | 192.168.50.2 fd00::2 | 10.0.0.0/8 fd00::/64 | 10.0.0.0/8      | fd00::/64",
        "             |                      | 0.0.0.0/0 ::/0       | 0.0.0.0/0       | ::/0",
    })
    void perFamily(String nodeIPs, String nodeAddresses, String given, String v4, String v6) {
        ProxyConfig cfg = ProxyConfig.builder("node-a").nodeIPs(ips(nodeIPs == null ? "" : nodeIPs))
                .nodePortAddresses(cidrs(given == null ? "" : given)).table("t").build();
        NodeInfo node = new NodeInfo("node-a", null, ips(nodeAddresses == null ? "" : nodeAddresses), false);
        assertEquals(cidrs(v4), NodePortAddresses.of(cfg, node, IpFamily.V4));
        assertEquals(cidrs(v6), NodePortAddresses.of(cfg, node, IpFamily.V6));
    }
}
