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
        return generate(n, k, generation, false);
    }

    /**
     * The same services with the features that cost a service proxy more: every seventh with
     * ClientIP session affinity (kube-proxy's default 10,800 s), and every twentieth (a NodePort)
     * with externalTrafficPolicy Local and its first endpoint on this node. `bench --compare`
     * runs on these.
     */
    /** In the mix, service i is sticky when i % STICKY_EVERY == STICKY_AT, and Local when i % LOCAL_EVERY == 0. */
    public static final int STICKY_EVERY = 7;
    public static final int STICKY_AT = 3;
    public static final int LOCAL_EVERY = 20;

    /** The name of generated service i's port. */
    public static ServicePortName id(int i) {
        return new ServicePortName("bench", "svc-" + i, "http", Protocol.TCP);
    }

    public static ProxyState mixed(int n, int k) {
        return generate(n, k, 0, true);
    }

    private static ProxyState generate(int n, int k, int generation, boolean mixed) {
        TreeMap<ServicePortName, ServicePort> svcs = new TreeMap<>();
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>();
        int svcBase = 0x0a600000; // 10.96.0.0
        int podBase = 0x0a800000; // 10.128.0.0
        for (int i = 0; i < n; i++) {
            ServicePortName id = id(i);
            boolean affinity = mixed && i % STICKY_EVERY == STICKY_AT;
            boolean local = mixed && i % LOCAL_EVERY == 0;
            svcs.put(id, ServicePort.builder(id, 80).clusterIPs(List.of(ip(svcBase + i + 1)))
                    .nodePort(i % 10 == 0 ? 30000 + (i / 10) % 2768 : 0).externalPolicyLocal(local)
                    .affinitySeconds(affinity ? 10_800 : 0).build());
            List<Endpoint> list = new ArrayList<>(k);
            for (int j = 0; j < k; j++) {
                String node = local && j == 0 ? "node-a" : "node-" + (j % 100);
                list.add(Endpoint.ready(ip(podBase + (i * k + j + generation * 7) % 0x7fffff), 8080, node));
            }
            eps.put(id, list);
        }
        return new ProxyState(svcs, eps, new NodeInfo("node-a", null, List.of(ip(0xc0a83202)), false));
    }
}
