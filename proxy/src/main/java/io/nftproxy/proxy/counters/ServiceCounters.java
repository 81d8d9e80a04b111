package io.nftproxy.proxy.counters;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.prometheus.client.Collector;
import io.prometheus.client.CounterMetricFamily;
import io.prometheus.client.GaugeMetricFamily;

import io.nftproxy.netlink.nft.CountedElement;
import io.nftproxy.netlink.nft.CounterReader;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.proxy.counters.CounterLedger.ElementId;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.proxy.sync.SyncResult;

/**
 * Connections per service port and per endpoint, and connections refused, as the kernel counted
 * them in the elements of our maps (--service-counters). Read when Prometheus scrapes: one dump
 * per counting set and family, no request per object, nothing on the sync path. The elements are
 * attributed with the state they were synced from, and made monotonic by a {@link CounterLedger}.
 *
 * <p>Why a Prometheus {@link Collector} here when the rest of our metrics are Micrometer meters:
 * these series are an exporter's, read from the kernel at scrape time, and their label sets come
 * and go with services and endpoints (100,000 of them at 10,000 services). A collector writes
 * what one read found and nothing else; Micrometer would need a meter registered per series and
 * removed when its endpoint goes, each through the registry's lock, kept in step with every sync.
 * Micrometer stays for our own instruments, whose series are fixed at start-up.
 */
public final class ServiceCounters extends Collector implements SyncListener {
    private static final Logger LOG = LoggerFactory.getLogger(ServiceCounters.class);
    private static final List<String> LABELS = List.of("namespace", "service", "port", "protocol");

    private final CounterReader reader;
    private final String table;
    private final CounterLedger ledger = new CounterLedger();
    private volatile ProxyState state;
    private long errors;
    private double lastSeconds;
    private long lastElements;

    public ServiceCounters(CounterReader reader, String table) {
        this.reader = reader;
        this.table = table;
    }

    @Override
    public void synced(SyncResult result, long durationNanos, ObjectStore.Snapshot snapshot) {
        if (result.elementsRecreated()) {
            recreated();
        }
        attributeWith(snapshot.state());
    }

    /** Our tables' elements were all written again (a full sync): their kernel counts start at zero. */
    public synchronized void recreated() {
        ledger.allRecreated();
    }

    /** The state the kernel's elements were synced from, which names them. */
    public void attributeWith(ProxyState synced) {
        state = synced;
    }

    /** Reads the kernel's counters now; on a failure the last totals stay (and the failure is counted). */
    public synchronized Map<CounterSeries, Long> read() {
        ProxyState s = state;
        if (s == null) {
            return ledger.totals();
        }
        long t0 = System.nanoTime();
        long elements = 0;
        ledger.begin();
        try {
            for (IpFamily f : IpFamily.values()) {
                CounterAttribution attribution = new CounterAttribution(s, f);
                for (String set : NftRenderer.COUNTED_SETS) {
                    List<CountedElement> els;
                    try {
                        els = reader.countedElements(f.nft(), table, set);
                    } catch (NftException e) {
                        if (e.isNotFound()) {
                            continue; // no table in this family, or no services with chains yet
                        }
                        throw e;
                    }
                    elements += els.size();
                    for (CountedElement e : els) {
                        CounterSeries series = attribution.of(set, e);
                        if (series != null) {
                            ledger.observe(new ElementId(f, set, e.key()), series, e.packets());
                        }
                    }
                }
            }
            Map<CounterSeries, Long> totals = ledger.finish(s.services()::containsKey);
            lastElements = elements;
            lastSeconds = (System.nanoTime() - t0) / 1e9;
            return totals;
        } catch (NftException e) {
            ledger.abort();
            errors++;
            LOG.warn("reading the service counters: {}", e.getMessage());
        }
        lastSeconds = (System.nanoTime() - t0) / 1e9;
        return ledger.totals();
    }

    @Override
    public List<MetricFamilySamples> collect() {
        Map<CounterSeries, Long> now = read();
        CounterMetricFamily service = new CounterMetricFamily("nftproxy_service_connections",
                "New connections to a service port, on any of its frontends, counted by the kernel", LABELS);
        List<String> epLabels = new ArrayList<>(LABELS);
        epLabels.add("endpoint");
        CounterMetricFamily endpoint = new CounterMetricFamily("nftproxy_endpoint_connections",
                "New connections a service port sent to an endpoint (address:port), counted by the kernel", epLabels);
        List<String> refusedLabels = new ArrayList<>(LABELS);
        refusedLabels.add("action");
        CounterMetricFamily refused = new CounterMetricFamily("nftproxy_service_refused_connections",
                "Connection attempts to a service port refused: rejected (no endpoints) or dropped (no endpoint usable"
                        + " here; a dropped attempt leaves no connection, so a client's retransmission counts again)",
                refusedLabels);
        now.forEach((s, v) -> {
            List<String> l = labels(s.port());
            switch (s.kind()) {
                case CONNECTIONS -> service.addMetric(l, v);
                case ENDPOINT_CONNECTIONS -> endpoint.addMetric(with(l, s.endpoint()), v);
                case REJECTED -> refused.addMetric(with(l, "reject"), v);
                case DROPPED -> refused.addMetric(with(l, "drop"), v);
            }
        });
        List<MetricFamilySamples> out = new ArrayList<>(List.of(service, endpoint, refused));
        synchronized (this) {
            out.add(new GaugeMetricFamily("nftproxy_service_counters_scrape_duration_seconds",
                    "Time the last read of the kernel's service counters took", lastSeconds));
            out.add(new GaugeMetricFamily("nftproxy_service_counters_elements",
                    "Counting set elements read at the last scrape", lastElements));
            out.add(new CounterMetricFamily("nftproxy_service_counters_scrape_errors",
                    "Reads of the kernel's service counters that failed", errors));
        }
        return out;
    }

    private static List<String> labels(ServicePortName id) {
        return List.of(id.namespace(), id.name(), id.port(), id.protocol().name().toLowerCase(Locale.ROOT));
    }

    private static List<String> with(List<String> l, String v) {
        List<String> out = new ArrayList<>(l);
        out.add(v);
        return out;
    }
}
