package io.nftproxy.proxy.counters;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.prometheus.client.Collector;
import io.prometheus.client.CounterMetricFamily;
import io.prometheus.client.GaugeMetricFamily;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.CountedElement;
import io.nftproxy.netlink.nft.CounterReader;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.proxy.counters.CounterLedger.ElementId;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;

/**
 * Connections per service port and connections refused (--service-counters), and per endpoint
 * (--endpoint-counters), as the kernel counted them in the elements of our sets and maps. Read
 * when Prometheus scrapes, nothing on the sync path: a set smaller than {@value #BY_KEY_FROM}
 * elements in one dump, a larger one by key, the keys we hold in it asked for (the kernel's dump
 * of a set restarts its walk for every message it fills, so a dump grows with the square of the
 * set; by key it grows with the keys). The elements are attributed with the state they were
 * synced from, and made monotonic by a {@link CounterLedger}.
 *
 * <p>A {@link Collector} of its own rather than the client's counters that {@code ProxyMetrics}
 * holds: these series are an exporter's, read from the kernel at scrape time, and their label
 * sets come and go with services and endpoints (100,000 of them at 10,000 services). A collector
 * writes what one read found and nothing else; labelled counters would need a child per series,
 * removed when its endpoint goes, kept in step with every sync.
 */
public final class ServiceCounters extends Collector implements SyncListener {
    private static final Logger LOG = LoggerFactory.getLogger(ServiceCounters.class);
    private static final List<String> LABELS = List.of("namespace", "service", "port", "protocol");

    /**
     * From this many elements a set is read by key: below it one dump is faster (10,000 elements
     * 50 ms by dump, 100 ms by key; 100,000 elements 1.5 s by dump, 0.6 s by key; docs/benchmarks.md).
     */
    public static final int BY_KEY_FROM = 50_000;

    /** What our syncer holds in a set: how many elements, and their keys (read from the scrape's thread). */
    public interface HeldElements {
        int count(IpFamily family, String set);

        List<Bytes> keys(IpFamily family, String set);

        /** The name a set of ours carries in the kernel now (a takeover writes beside the sets in use under names of its own). */
        default String kernelName(String set) {
            return set;
        }

        static HeldElements of(Syncer syncer) {
            return new HeldElements() {
                @Override
                public int count(IpFamily family, String set) {
                    return syncer.heldCount(family, set);
                }

                @Override
                public List<Bytes> keys(IpFamily family, String set) {
                    return syncer.heldKeys(family, set);
                }

                @Override
                public String kernelName(String set) {
                    return syncer.generation().set(set);
                }
            };
        }
    }

    private final CounterReader reader;
    private final String table;
    private final List<String> sets;
    private final HeldElements held;
    private final int byKeyFrom;
    private final CounterLedger ledger = new CounterLedger();
    private volatile ProxyState state;
    /** The attribution of {@link #attributed}, per family: built again only when the state changes. */
    private final Map<IpFamily, CounterAttribution> attributions = new EnumMap<>(IpFamily.class);
    private ProxyState attributed;
    private long errors;
    private double lastSeconds;
    private long lastElements;

    /**
     * Reads {@code sets} (those {@link CountedSets#countedSets} declares) of {@code table};
     * {@code held} says which to read by key, and their keys (null: every set in one dump).
     */
    public ServiceCounters(CounterReader reader, String table, List<String> sets, HeldElements held) {
        this(reader, table, sets, held, BY_KEY_FROM);
    }

    /** As above, reading a set by key from {@code byKeyFrom} elements (tests). */
    public ServiceCounters(CounterReader reader, String table, List<String> sets, HeldElements held, int byKeyFrom) {
        this.reader = reader;
        this.table = table;
        this.sets = List.copyOf(sets);
        this.held = held;
        this.byKeyFrom = byKeyFrom;
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
                CounterAttribution attribution = attribution(s, f);
                for (String set : sets) {
                    List<CountedElement> els;
                    try {
                        els = read(f, set);
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

    /** How to attribute {@code f}'s elements with state {@code s} (held by the scrape's lock). */
    private CounterAttribution attribution(ProxyState s, IpFamily f) {
        if (s != attributed) {
            attributions.clear();
            attributed = s;
        }
        return attributions.computeIfAbsent(f, x -> new CounterAttribution(s, x));
    }

    /**
     * One set's counted elements: in one dump (read again if the kernel resized the set meanwhile
     * and the dump repeats elements or misses some), or by the keys we hold in it; none when we
     * hold none there.
     */
    private List<CountedElement> read(IpFamily f, String set) throws NftException {
        if (held == null) {
            return reader.countedElements(f.nft(), table, set);
        }
        int n = held.count(f, set);
        if (n == 0) {
            return List.of();
        }
        String name = held.kernelName(set);
        return n < byKeyFrom ? reader.countedElements(f.nft(), table, name, n)
                : reader.countedElements(f.nft(), table, name, held.keys(f, set));
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
        List<MetricFamilySamples> out = new ArrayList<>(List.of(service, refused));
        if (!endpoint.samples.isEmpty()) { // counted with --endpoint-counters only
            out.add(1, endpoint);
        }
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
        return List.of(id.namespace(), id.name(), id.port(), id.protocol().lower());
    }

    private static List<String> with(List<String> l, String v) {
        List<String> out = new ArrayList<>(l);
        out.add(v);
        return out;
    }
}
