package io.nftproxy.proxy.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.config.Durations;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;

class MetricsEndpointsTest {
    @Test
    void durationsPrintAsGoPrintsThem() {
        assertEquals("0s", Durations.format(Duration.ZERO));
        assertEquals("500ms", Durations.format(Duration.ofMillis(500)));
        assertEquals("1s", Durations.format(Duration.ofSeconds(1)));
        assertEquals("1.5s", Durations.format(Duration.ofMillis(1500)));
        assertEquals("30s", Durations.format(Duration.ofSeconds(30)));
        assertEquals("1m30s", Durations.format(Duration.ofSeconds(90)));
        assertEquals("1h0m0s", Durations.format(Duration.ofHours(1)));
    }

    @Test
    void configzUsesKubeProxysFieldNames() {
        ProxyConfig cfg = ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse("192.168.0.2")))
                .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).serviceCIDRs(List.of(Cidr.parse("10.96.0.0/12")))
                .masqueradeAll(true).build();
        assertEquals("{\"kubeproxy.config.k8s.io\":{\"mode\":\"nftables\",\"hostnameOverride\":\"node-a\","
                + "\"clusterCIDR\":\"10.244.0.0/16\",\"detectLocalMode\":\"ClusterCIDR\","
                + "\"detectLocal\":{\"bridgeInterface\":\"\",\"interfaceNamePrefix\":\"\"},\"nodePortAddresses\":[\"primary\"],\"nftables\":{\"masqueradeAll\":true,"
                + "\"masqueradeBit\":14,\"minSyncPeriod\":\"1s\",\"syncPeriod\":\"30s\"},\"nftproxy\":{\"serviceCIDRs\":\"10.96.0.0/12\","
                + "\"nodeIPs\":\"192.168.0.2\",\"table\":\"nftproxy\"}}}", MetricsEndpoints.configz("nftables", cfg));
    }
}
