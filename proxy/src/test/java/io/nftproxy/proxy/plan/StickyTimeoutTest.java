package io.nftproxy.proxy.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/** Which timeouts a service port's clients are remembered with, as a table: a sync counts them as ports come and go. */
class StickyTimeoutTest {

    /** {@code shape}: "nodeport", "lb", "extip", "etp-local", "affinity=SECONDS", space-separated. */
    static ServicePort port(String shape) {
        List<String> words = List.of(shape.split(" "));
        ServicePort.Builder b = ServicePort.builder(new ServicePortName("ns", "svc", "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.1"))).nodePort(words.contains("nodeport") ? 30080 : 0)
                .externalPolicyLocal(words.contains("etp-local"));
        if (words.contains("lb")) {
            b.loadBalancerIPs(List.of(Inet.parse("203.0.113.1")));
        }
        if (words.contains("extip")) {
            b.externalIPs(List.of(Inet.parse("198.51.100.1")));
        }
        words.stream().filter(w -> w.startsWith("affinity=")).findFirst()
                .ifPresent(w -> b.affinitySeconds(Integer.parseInt(w.substring(9))));
        return b.build();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        // description; shape; timeouts ("local-" for the local trees')
        "no affinity: none; nodeport etp-local; ''",
        "a ClusterIP with affinity: the cluster trees'; affinity=10800; 10800",
        "a NodePort of policy Cluster: the cluster trees' alone; nodeport affinity=60; 60",
        "a NodePort of policy Local: both kinds of tree; nodeport etp-local affinity=60; 60 local-60",
        "a load balancer of policy Local; lb etp-local affinity=5; 5 local-5",
        "an external IP of policy Local; extip etp-local affinity=5; 5 local-5",
        "policy Local without external traffic: the cluster trees' alone; etp-local affinity=30; 30",
    })
    void timeoutsOfAPort(String description, String shape, String expected) {
        List<String> got = StickyTimeout.usedBy(port(shape)).stream()
                .map(t -> (t.local() ? "local-" : "") + t.seconds()).toList();
        assertEquals(expected, String.join(" ", got), description);
    }

    @Test
    void aTimeoutIsPositiveAndTheClusterTreesComeFirst() {
        assertThrows(IllegalArgumentException.class, () -> new StickyTimeout(0, false));
        assertEquals(List.of(new StickyTimeout(60, false), new StickyTimeout(5, true), new StickyTimeout(60, true)),
                new java.util.TreeSet<>(List.of(new StickyTimeout(60, true), new StickyTimeout(5, true),
                        new StickyTimeout(60, false))).stream().toList());
    }
}
