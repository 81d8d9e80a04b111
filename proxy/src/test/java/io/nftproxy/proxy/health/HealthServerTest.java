package io.nftproxy.proxy.health;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;

import org.junit.jupiter.api.Test;

/**
 * /healthz and /livez bodies byte for byte as kube-proxy's handlers write them (json.Marshal of its
 * ProxyHealth: compact, fields in declaration order, times as Go's RFC 3339 with nanoseconds,
 * status per IP family, nodeEligible on /healthz only).
 */
class HealthServerTest {
    static final Instant SYNCED = Instant.parse("2026-07-24T10:00:01.250Z");
    static final String STATUS = "\"status\":{\"IPv4\":{\"lastUpdated\":\"2026-07-24T10:00:01.25Z\",\"healthy\":true},"
            + "\"IPv6\":{\"lastUpdated\":\"2026-07-24T10:00:01.25Z\",\"healthy\":true}}";

    @Test
    void healthyAnswersWithTheTimeOfTheAnswerAndEachFamily() {
        Instant now = Instant.parse("2026-07-24T10:00:30.500Z");
        HealthState.Status s = new HealthState.Status(true, true, SYNCED, now);
        assertEquals("{\"lastUpdated\":\"2026-07-24T10:00:30.5Z\",\"currentTime\":\"2026-07-24T10:00:30.5Z\","
                + "\"nodeEligible\":true,\"healthy\":true," + STATUS + "}", HealthServer.body(s, 200, true));
        assertEquals("{\"lastUpdated\":\"2026-07-24T10:00:30.5Z\",\"currentTime\":\"2026-07-24T10:00:30.5Z\","
                + "\"healthy\":true," + STATUS + "}", HealthServer.body(s, 200, false));
    }

    /** A node leaving (deleted, or tainted ToBeDeletedByClusterAutoscaler): /healthz 503 with healthy still true. */
    @Test
    void aLeavingNodeIsNotEligibleButTheProxyIsHealthy() {
        Instant now = Instant.parse("2026-07-24T10:00:40Z");
        HealthState.Status s = new HealthState.Status(true, false, SYNCED, now);
        assertEquals(503, s.healthzOk() ? 200 : 503);
        assertEquals("{\"lastUpdated\":\"2026-07-24T10:00:01.25Z\",\"currentTime\":\"2026-07-24T10:00:40Z\","
                + "\"nodeEligible\":false,\"healthy\":true," + STATUS + "}", HealthServer.body(s, 503, true));
    }

    @Test
    void beforeAnySyncNoStatusAndGosZeroTime() {
        HealthState.Status s = new HealthState.Status(true, true, null, Instant.parse("2026-07-24T10:00:00.000000001Z"));
        assertEquals("{\"lastUpdated\":\"0001-01-01T00:00:00Z\",\"currentTime\":\"2026-07-24T10:00:00.000000001Z\","
                + "\"nodeEligible\":true,\"healthy\":true}", HealthServer.body(s, 503, true));
    }

    @Test
    void staleSaysWhichFamiliesAreBehind() {
        HealthState.Status s = new HealthState.Status(false, true, SYNCED, Instant.parse("2026-07-24T10:01:30Z"));
        assertEquals("{\"lastUpdated\":\"2026-07-24T10:00:01.25Z\",\"currentTime\":\"2026-07-24T10:01:30Z\","
                + "\"healthy\":false,\"status\":{\"IPv4\":{\"lastUpdated\":\"2026-07-24T10:00:01.25Z\",\"healthy\":false},"
                + "\"IPv6\":{\"lastUpdated\":\"2026-07-24T10:00:01.25Z\",\"healthy\":false}}}", HealthServer.body(s, 503, false));
    }
}
