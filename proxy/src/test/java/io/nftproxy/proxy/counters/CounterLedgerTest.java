package io.nftproxy.proxy.counters;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.proxy.counters.CounterLedger.ElementId;
import io.nftproxy.proxy.counters.CounterSeries.Kind;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePortName;

class CounterLedgerTest {
    private static final ServicePortName WEB = new ServicePortName("ns", "web", "http", Protocol.TCP);
    private static final ServicePortName API = new ServicePortName("ns", "api", "http", Protocol.TCP);
    private static final CounterSeries WEB_CONN = new CounterSeries(Kind.CONNECTIONS, WEB, null);
    private static final CounterSeries API_CONN = new CounterSeries(Kind.CONNECTIONS, API, null);
    private static final ElementId CLUSTER_IP = new ElementId(IpFamily.V4, "service-ips", Bytes.be32(1));
    private static final ElementId NODE_PORT = new ElementId(IpFamily.V4, "service-nodeports", Bytes.be32(2));

    /** One scrape: each element with its kernel count; the totals after it. */
    private static Map<CounterSeries, Long> scrape(CounterLedger l, Set<ServicePortName> exist, Object... idSeriesCount) {
        l.begin();
        for (int i = 0; i < idSeriesCount.length; i += 3) {
            l.observe((ElementId) idSeriesCount[i], (CounterSeries) idSeriesCount[i + 1], (Long) idSeriesCount[i + 2]);
        }
        return l.finish(exist::contains);
    }

    @Test
    void aServicesFrontendsAddUpAndAReCreatedElementCarriesOn() {
        CounterLedger l = new CounterLedger();
        assertEquals(Map.of(WEB_CONN, 7L), scrape(l, Set.of(WEB), CLUSTER_IP, WEB_CONN, 5L, NODE_PORT, WEB_CONN, 2L));
        assertEquals(Map.of(WEB_CONN, 10L), scrape(l, Set.of(WEB), CLUSTER_IP, WEB_CONN, 8L, NODE_PORT, WEB_CONN, 2L));
        // The ClusterIP's element was written again by a sync: the kernel reads 1, the series does not drop.
        assertEquals(Map.of(WEB_CONN, 11L), scrape(l, Set.of(WEB), CLUSTER_IP, WEB_CONN, 1L, NODE_PORT, WEB_CONN, 2L));
        assertEquals(Map.of(WEB_CONN, 14L), scrape(l, Set.of(WEB), CLUSTER_IP, WEB_CONN, 4L, NODE_PORT, WEB_CONN, 2L));
    }

    @Test
    void anElementGoneKeepsItsCountUntilItsServiceGoes() {
        CounterLedger l = new CounterLedger();
        scrape(l, Set.of(WEB), CLUSTER_IP, WEB_CONN, 5L, NODE_PORT, WEB_CONN, 2L);
        assertEquals(Map.of(WEB_CONN, 7L), scrape(l, Set.of(WEB), CLUSTER_IP, WEB_CONN, 5L),
                "the NodePort was removed; what it counted stays");
        assertEquals(Map.of(WEB_CONN, 9L), scrape(l, Set.of(WEB), CLUSTER_IP, WEB_CONN, 5L, NODE_PORT, WEB_CONN, 2L),
                "and a new NodePort element counts from zero on top");
        assertEquals(Map.of(), scrape(l, Set.of()), "the service is gone: so are its series");
        assertEquals(Map.of(WEB_CONN, 0L), scrape(l, Set.of(WEB), CLUSTER_IP, WEB_CONN, 0L), "a new web starts over");
    }

    @Test
    void aKeyThatNowNamesAnotherServiceLeavesItsCountWithTheFirst() {
        CounterLedger l = new CounterLedger();
        scrape(l, Set.of(WEB, API), CLUSTER_IP, WEB_CONN, 5L);
        assertEquals(Map.of(WEB_CONN, 5L, API_CONN, 1L), scrape(l, Set.of(WEB, API), CLUSTER_IP, API_CONN, 1L));
    }

    @Test
    void aFailedScrapeTakesNothingForGone() {
        CounterLedger l = new CounterLedger();
        scrape(l, Set.of(WEB), CLUSTER_IP, WEB_CONN, 5L, NODE_PORT, WEB_CONN, 2L);
        l.begin();
        l.observe(CLUSTER_IP, WEB_CONN, 6L);
        l.abort();
        assertEquals(Map.of(WEB_CONN, 8L), scrape(l, Set.of(WEB), CLUSTER_IP, WEB_CONN, 6L, NODE_PORT, WEB_CONN, 2L));
        assertThrows(IllegalStateException.class, () -> l.observe(CLUSTER_IP, WEB_CONN, 1L));
    }

    @Test
    void aFullSyncIsAResetEvenWhenTheNewCountOvertakesTheOld() {
        CounterLedger l = new CounterLedger();
        scrape(l, Set.of(WEB), CLUSTER_IP, WEB_CONN, 5L);
        l.allRecreated();
        // Busy since the full sync: 9 is above 5, which alone would look like growth, not a reset.
        assertEquals(Map.of(WEB_CONN, 14L), scrape(l, Set.of(WEB), CLUSTER_IP, WEB_CONN, 9L));
    }
}
