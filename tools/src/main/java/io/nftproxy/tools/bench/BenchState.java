package io.nftproxy.tools.bench;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.LbAlgorithm;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/** The benchmark's node and generated services, the same for every backend and mode. */
public final class BenchState {
    private BenchState() {
    }

    public static ProxyConfig config() {
        return ProxyConfig.builder("node-a").nodeIPs(List.of(ip(0xc0a83202)))
                .clusterCIDRs(List.of(Cidr.parse("10.128.0.0/9"))).serviceCIDRs(List.of(Cidr.parse("10.96.0.0/12")))
                .minSyncPeriod(Duration.ZERO).build();
    }

    public static InetAddress ip(int v) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** N services, each one TCP port with k ready endpoints spread over 100 nodes; every tenth a NodePort
     * (distinct up to 27,680 services). */
    public static ProxyState synthetic(int n, int k, int generation) {
        return generate(n, k, generation, false, MANY_ENDPOINTS);
    }

    /*
     * The mix: the same services with the features that cost a service proxy more: every seventh
     * with ClientIP session affinity (kube-proxy's default 10,800 s), every twentieth (a
     * NodePort) with externalTrafficPolicy Local and its first endpoint on this node, every
     * fiftieth a load balancer with loadBalancerSourceRanges, and every thousandth with
     * MANY_ENDPOINTS endpoints. `bench --compare` runs on these.
     */
    /** In the mix, service i is sticky when i % STICKY_EVERY == STICKY_AT, and Local when i % LOCAL_EVERY == 0. */
    public static final int STICKY_EVERY = 7;
    public static final int STICKY_AT = 3;
    public static final int LOCAL_EVERY = 20;
    /** Service i has a load-balancer IP with source ranges when i % RANGES_EVERY == RANGES_AT. */
    public static final int RANGES_EVERY = 50;
    public static final int RANGES_AT = 25;
    /** Service i has MANY_ENDPOINTS endpoints when i % MANY_EVERY == MANY_AT (more than the shared chains pick among). */
    public static final int MANY_EVERY = 1000;
    public static final int MANY_AT = 500;
    public static final int MANY_ENDPOINTS = 200;
    /** The ranges of the mix's load balancers: the pod network is outside them. */
    public static final List<Cidr> SOURCE_RANGES = List.of(Cidr.parse("192.168.0.0/16"), Cidr.parse("172.16.0.0/12"));

    /** The name of generated service i's port. */
    public static ServicePortName id(int i) {
        return new ServicePortName("bench", "svc-" + i, "http", Protocol.TCP);
    }

    /** Service i's load-balancer IP, from 100.64.0.0/10 (shared address space, outside every other range of the bench). */
    public static InetAddress loadBalancerIP(int i) {
        return ip(0x64400000 + i);
    }

    /** {@code state} with every service port picking its endpoints by {@code a} (as its Service's annotation asks). */
    public static ProxyState withAlgorithm(ProxyState state, LbAlgorithm a) {
        if (a == LbAlgorithm.RANDOM) {
            return state;
        }
        TreeMap<ServicePortName, ServicePort> svcs = new TreeMap<>();
        state.services().forEach((id, p) -> svcs.put(id, p.toBuilder().algorithm(a).build()));
        return new ProxyState(svcs, state.endpoints(), state.node());
    }

    public static ProxyState mixed(int n, int k) {
        return mixed(n, k, MANY_ENDPOINTS);
    }

    /** The mix, its every thousandth service with {@code many} endpoints ({@code bench --many-endpoints}). */
    public static ProxyState mixed(int n, int k, int many) {
        return generate(n, k, 0, true, many);
    }

    private static ProxyState generate(int n, int k, int generation, boolean mixed, int many) {
        TreeMap<ServicePortName, ServicePort> svcs = new TreeMap<>();
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>();
        int svcBase = 0x0a600000; // 10.96.0.0
        int podBase = 0x0a800000; // 10.128.0.0
        for (int i = 0; i < n; i++) {
            ServicePortName id = id(i);
            boolean affinity = mixed && i % STICKY_EVERY == STICKY_AT;
            boolean local = mixed && i % LOCAL_EVERY == 0;
            ServicePort.Builder port = ServicePort.builder(id, 80).clusterIPs(List.of(ip(svcBase + i + 1)))
                    .nodePort(i % 10 == 0 ? 30000 + (i / 10) % 2768 : 0).externalPolicyLocal(local)
                    .affinitySeconds(affinity ? 10_800 : 0);
            if (mixed && i % RANGES_EVERY == RANGES_AT) {
                port.loadBalancerIPs(List.of(loadBalancerIP(i))).loadBalancerSourceRanges(SOURCE_RANGES);
            }
            svcs.put(id, port.build());
            int count = mixed && i % MANY_EVERY == MANY_AT ? many : k;
            List<Endpoint> list = new ArrayList<>(count);
            for (int j = 0; j < count; j++) {
                String node = local && j == 0 ? "node-a" : "node-" + (j % 100);
                list.add(Endpoint.ready(ip(podBase + (i * k + j + generation * 7) % 0x7fffff), 8080, node));
            }
            eps.put(id, list);
        }
        return new ProxyState(svcs, eps, new NodeInfo("node-a", null, List.of(ip(0xc0a83202)), false));
    }
}
