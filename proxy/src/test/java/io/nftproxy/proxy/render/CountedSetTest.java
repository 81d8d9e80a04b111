package io.nftproxy.proxy.render;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.proxy.config.ProxyConfig;

/**
 * Which sets count and what their elements name, as a table: the renderer marks a set's elements
 * counting and the counters read them back from the same entry.
 */
class CountedSetTest {
    static final ProxyConfig NONE = ProxyConfig.builder("node-a").build();
    static final ProxyConfig SERVICES = ProxyConfig.builder("node-a").serviceCounters(true).build();
    static final ProxyConfig ENDPOINTS = ProxyConfig.builder("node-a").serviceCounters(true).endpointCounters(true).build();

    @ParameterizedTest(name = "{0}")
    @CsvSource(nullValues = "-", value = {
        // set, counting set, key, met, counts with --service-counters, with --endpoint-counters too
        "service-ips, SERVICE_IPS, FRONTEND, SERVICE, true, true",
        "nodeport-chains, NODEPORT_CHAINS, NODEPORT, SERVICE, true, true",
        "local-nodeports, LOCAL_NODEPORTS, NODEPORT, SERVICE, true, true",
        "no-endpoint-reject, NO_ENDPOINT_REJECT, FRONTEND, REJECT, true, true",
        "nodeport-no-local-endpoint, NODEPORT_NO_LOCAL_ENDPOINT, NODEPORT, DROP, true, true",
        "chain-endpoints, CHAIN_ENDPOINTS, FIRST_CLUSTER_IP_AND_ENDPOINT, ENDPOINT, true, true",
        "service-endpoints-1-8, SERVICE_ENDPOINTS, FRONTEND_INDEX, ENDPOINT, false, true",
        "service-endpoints-129-256, SERVICE_ENDPOINTS, FRONTEND_INDEX, ENDPOINT, false, true",
        "service-endpoints-1025-1152, SERVICE_ENDPOINTS, FRONTEND_INDEX, ENDPOINT, false, true",
        "nodeport-local-endpoints-897-1024, NODEPORT_LOCAL_ENDPOINTS, NODEPORT_INDEX, ENDPOINT, false, true",
        "ip-sticky-endpoints-1-8, SERVICE_ENDPOINTS, FRONTEND_INDEX, ENDPOINT, false, true",
        "ip-maglev-slots-1601, SERVICE_ENDPOINTS, FRONTEND_INDEX, ENDPOINT, false, true",
        "nodeport-source-hash-slots-809, NODEPORT_ENDPOINTS, NODEPORT_INDEX, ENDPOINT, false, true",
        "ip-maglev-1601, -, -, -, false, false",
        // never counting: the kinds' names alone (no such map), the checks, the rest
        "service-endpoints, -, -, -, false, false",
        "service-endpoints-check, -, -, -, false, false",
        "cluster-ips, -, -, -, false, false",
        "firewall-allow-7, -, -, -, false, false",
        "unserved-ips, -, -, -, false, false",
    })
    void whatASetCounts(String set, CountedSet expected, CountedSet.Key key, CountedSet.Met met,
                        boolean withServiceCounters, boolean withEndpointCounters) {
        CountedSet got = CountedSet.of(set);
        assertEquals(expected, got, set);
        if (got != null) {
            assertEquals(key, got.key(), set);
            assertEquals(met, got.met(), set);
        }
        assertEquals(false, CountedSets.counts(NONE, set), set + " without counters");
        assertEquals(withServiceCounters, CountedSets.counts(SERVICES, set), set + " with --service-counters");
        assertEquals(withEndpointCounters, CountedSets.counts(ENDPOINTS, set), set + " with --endpoint-counters");
    }

    @Test
    void everySetTheCountersReadIsOneTheRendererCounts() {
        assertEquals(List.of(), CountedSets.countedSets(NONE));
        Set<String> service = new HashSet<>(CountedSets.countedSets(SERVICES));
        assertEquals(13, service.size(), "each frontend once where it is sent on or refused, and the chains' endpoints");
        for (String set : CountedSets.countedSets(ENDPOINTS)) {
            assertNotNull(CountedSet.of(set), set);
            assertEquals(true, CountedSets.counts(ENDPOINTS, set), set);
            assertEquals(service.contains(set), CountedSets.counts(SERVICES, set), set);
        }
    }
}
