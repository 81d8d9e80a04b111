package io.nftproxy.proxy.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/** Which timeouts a service port's clients are remembered with, as a table: a sync counts them as ports come and go. */
class StickyTimeoutTest {

    static ServicePort port(String shape) {
        return PortShapes.port(new ServicePortName("ns", "svc", "http", Protocol.TCP), 1, shape).build();
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
