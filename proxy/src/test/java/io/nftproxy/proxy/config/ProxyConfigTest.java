package io.nftproxy.proxy.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ProxyConfigTest {
    @ParameterizedTest(name = "--sync-period {0}s: full re-sync every {1}s")
    @CsvSource({
            "30,   3600", // kube-proxy's defaults: periodic syncs are partial, the full one hourly
            "1,    3600",
            "3600, 3600",
            "7200, 7200", // a longer sync period is never shortened
    })
    void fullResyncsAreHourlyUnlessTheSyncPeriodIsLonger(long syncSeconds, long fullSeconds) {
        ProxyConfig cfg = ProxyConfig.builder("node-a").syncPeriod(Duration.ofSeconds(syncSeconds)).build();
        assertEquals(Duration.ofSeconds(fullSeconds), cfg.fullSyncPeriod());
    }
}
