package io.nftproxy.proxy.health;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.ManualClock;

/** kube-proxy's health rule, in virtual time, plus ours: rules known missing are unhealthy at once. */
class HealthStateTest {
    @Test
    void aPendingChangeTurnsUnhealthyOnlyAfterTheTimeout() {
        ManualClock clock = new ManualClock();
        HealthState h = new HealthState(clock, Duration.ofSeconds(60));
        h.queued();
        clock.now = clock.now.plusSeconds(60);
        assertTrue(h.status().healthy(), "at the timeout, still healthy");
        clock.now = clock.now.plusSeconds(1);
        assertFalse(h.status().healthy(), "past it, unhealthy");
        h.synced();
        assertTrue(h.status().healthy());
    }

    @Test
    void rulesMissingIsUnhealthyAtOnceUntilASyncPutsThemBack() {
        ManualClock clock = new ManualClock();
        HealthState h = new HealthState(clock, Duration.ofSeconds(60));
        h.synced();
        h.rulesMissing();
        assertFalse(h.status().healthy(), "no waiting for the timeout: the node is not handling traffic");
        assertFalse(h.status().healthzOk());
        h.queued(); // more changes do not clear it
        assertFalse(h.status().healthy());
        h.synced();
        assertTrue(h.status().healthzOk(), "the repair is committed");
    }

    @Test
    void aDeletingNodeFailsHealthzButStaysLive() {
        HealthState h = new HealthState(new ManualClock(), Duration.ofSeconds(60));
        h.synced();
        h.nodeDeleting(true);
        assertTrue(h.status().healthy());
        assertFalse(h.status().healthzOk());
    }

    @Test
    void startingUpIsAliveButNotReadyUntilTheFirstSync() {
        ManualClock clock = new ManualClock();
        HealthState h = new HealthState(clock, Duration.ofSeconds(60));
        clock.now = clock.now.plusSeconds(3600); // an API server away for an hour: nothing queued, nothing synced
        assertTrue(h.status().healthy(), "/livez: a proxy waiting for its source is alive");
        assertFalse(h.status().healthzOk(), "/healthz: no rules programmed yet");
        h.synced();
        assertTrue(h.status().healthzOk());
    }

    @Test
    void aMissingNodeFailsHealthzButStaysLive() {
        HealthState h = new HealthState(new ManualClock(), Duration.ofSeconds(60));
        h.synced();
        h.nodeMissing(true);
        assertTrue(h.status().healthy());
        assertFalse(h.status().nodeEligible());
        assertFalse(h.status().healthzOk());
        h.nodeMissing(false);
        assertTrue(h.status().healthzOk());
    }
}
