package io.nftproxy.proxy.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;

/** kube-proxy's detect-local-mode settings: defaults, validation, and what each mode detects by. */
class LocalDetectionTest {
    @ParameterizedTest(name = "mode [{0}] bridge [{1}] prefix [{2}] -> {3}")
    @CsvSource(delimiter = '|', nullValues = "-", value = {
        "-                   | -    | -    | ClusterCIDR",
        "''                  | -    | -    | ClusterCIDR",
        "ClusterCIDR         | -    | -    | ClusterCIDR",
        "NodeCIDR            | -    | -    | NodeCIDR",
        "nodecidr            | -    | -    | NodeCIDR",
        "BridgeInterface     | cni0 | -    | BridgeInterface cni0",
        "InterfaceNamePrefix | -    | veth | InterfaceNamePrefix veth",
        "ClusterCIDR         | cni0 | veth | ClusterCIDR",
    })
    void parses(String mode, String bridge, String prefix, String expected) {
        assertEquals(expected, LocalDetection.parse(mode, bridge, prefix).toString());
    }

    @ParameterizedTest(name = "mode [{0}] bridge [{1}] prefix [{2}] is refused: {3}")
    @CsvSource(delimiter = '|', nullValues = "-", value = {
        "Bogus               | -                   | -    | unknown detect-local-mode 'Bogus'",
        "BridgeInterface     | -                   | -    | needs --pod-bridge-interface",
        "BridgeInterface     | ' '                 | -    | needs --pod-bridge-interface",
        "InterfaceNamePrefix | -                   | -    | needs --pod-interface-name-prefix",
        "BridgeInterface     | a-name-much-too-long | -   | is not a valid interface name",
        "InterfaceNamePrefix | -                   | a/b  | is not a valid interface name",
    })
    void refuses(String mode, String bridge, String prefix, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LocalDetection.parse(mode, bridge, prefix));
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }

    @Test
    void cidrModesDetectNothingInAFamilyWithoutACidr() {
        ProxyConfig cfg = ProxyConfig.builder("node-a").clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).build();
        NodeInfo node = new NodeInfo("node-a", null, List.of(), false, List.of(Cidr.parse("fd00:244:2::/64")));
        LocalDetection cluster = LocalDetection.CLUSTER_CIDR;
        LocalDetection nodeCidr = LocalDetection.parse("NodeCIDR", null, null);
        assertEquals(List.of(Cidr.parse("10.244.0.0/16")), cluster.cidrs(cfg, node, IpFamily.V4));
        assertFalse(cluster.implemented(cfg, node, IpFamily.V6));
        assertEquals(List.of(Cidr.parse("fd00:244:2::/64")), nodeCidr.cidrs(cfg, node, IpFamily.V6), "the Node's, not the cluster's");
        assertFalse(nodeCidr.implemented(cfg, node, IpFamily.V4));
        assertTrue(LocalDetection.parse("BridgeInterface", "cni0", null).implemented(cfg, node, IpFamily.V6),
                "an interface serves every family");
    }
}
