package io.nftproxy.proxy.plan;

import java.util.ArrayList;
import java.util.List;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * A service port from a few words, for tables of cases: "nodeport", "lb" (203.0.113.N), "extip"
 * (198.51.100.N), "v6" (a second ClusterIP fd00::N), "etp-local", "itp-local",
 * "ranges=CIDR|CIDR", "affinity=SECONDS", space-separated ("" or "-": none of them).
 */
public final class PortShapes {
    private PortShapes() {
    }

    /** Port 80 of {@code id} at ClusterIP 10.96.0.N, NodePort 30079 + N with "nodeport". */
    public static ServicePort.Builder port(ServicePortName id, int n, String shape) {
        List<String> words = shape == null || shape.isBlank() || shape.equals("-") ? List.of() : List.of(shape.split(" "));
        List<java.net.InetAddress> clusterIPs = new ArrayList<>(List.of(Inet.parse("10.96.0." + n)));
        if (words.contains("v6")) {
            clusterIPs.add(Inet.parse("fd00::" + n));
        }
        ServicePort.Builder b = ServicePort.builder(id, 80).clusterIPs(clusterIPs)
                .nodePort(words.contains("nodeport") ? 30079 + n : 0)
                .externalPolicyLocal(words.contains("etp-local")).internalPolicyLocal(words.contains("itp-local"));
        if (words.contains("lb")) {
            b.loadBalancerIPs(List.of(Inet.parse("203.0.113." + n)));
        }
        if (words.contains("extip")) {
            b.externalIPs(List.of(Inet.parse("198.51.100." + n)));
        }
        words.stream().filter(w -> w.startsWith("affinity=")).findFirst()
                .ifPresent(w -> b.affinitySeconds(Integer.parseInt(w.substring(9))));
        words.stream().filter(w -> w.startsWith("ranges=")).findFirst().ifPresent(w ->
                b.loadBalancerSourceRanges(List.of(w.substring(7).split("\\|")).stream().map(Cidr::parse).toList()));
        return b;
    }
}
