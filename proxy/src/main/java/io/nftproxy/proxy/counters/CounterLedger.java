package io.nftproxy.proxy.counters;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Predicate;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * Turns the kernel's element counters, which start over whenever a sync re-creates an element
 * (an endpoint list changed, a full re-sync), into counters that never go backwards, as
 * Prometheus expects of a {@code _total}. Kept per element: an element read lower than last time
 * was re-created, and its old count is carried over; an element gone keeps what it counted in its
 * series. A series lives as long as its service port does.
 *
 * <p>What an element counts between the last scrape and its re-creation is lost (the kernel
 * drops it with the element); the counters undercount by that, never overcount.
 */
public final class CounterLedger {
    /** An element of a counting set, in one family's table. */
    public record ElementId(IpFamily family, String set, Bytes key) {
    }

    private static final class Entry {
        CounterSeries series;
        long last;
        long carried;
        boolean seen;

        long total() {
            return carried + last;
        }
    }

    private final Map<ElementId, Entry> live = new HashMap<>();
    private final Map<CounterSeries, Long> retired = new HashMap<>();
    private boolean scraping;

    /** Starts a scrape: the elements observed until {@link #finish} are the ones that exist now. */
    public void begin() {
        live.values().forEach(e -> e.seen = false);
        scraping = true;
    }

    /** An element and its count as read now. */
    public void observe(ElementId id, CounterSeries series, long count) {
        if (!scraping) {
            throw new IllegalStateException("observe() outside begin() .. finish()");
        }
        Entry e = live.get(id);
        if (e == null) {
            e = new Entry();
            e.series = series;
            live.put(id, e);
        } else if (!e.series.equals(series)) {
            // The same key now names another service port (an address moved): what it counted stays with the old one.
            retired.merge(e.series, e.total(), Long::sum);
            e.series = series;
            e.carried = 0;
            e.last = 0;
        } else if (count < e.last) {
            e.carried += e.last; // re-created since the last scrape
        }
        e.last = count;
        e.seen = true;
    }

    /**
     * Every element was written again (a full sync flushes and refills our sets): the kernel's
     * counts start over, whatever they reach before the next scrape. What each element counted
     * so far is carried.
     */
    public void allRecreated() {
        for (Entry e : live.values()) {
            e.carried += e.last;
            e.last = 0;
        }
    }

    /** Abandons a scrape that could not read everything: nothing is taken for gone. */
    public void abort() {
        scraping = false;
        live.values().forEach(e -> e.seen = true);
    }

    /**
     * Ends a scrape: elements not observed are gone, their counts kept in their series; series of
     * service ports that no longer exist are forgotten. Returns every series' total.
     */
    public Map<CounterSeries, Long> finish(Predicate<ServicePortName> exists) {
        scraping = false;
        for (Iterator<Entry> it = live.values().iterator(); it.hasNext(); ) {
            Entry e = it.next();
            if (!e.seen) {
                retired.merge(e.series, e.total(), Long::sum);
                it.remove();
            }
        }
        retired.keySet().removeIf(s -> !exists.test(s.port()));
        return totals();
    }

    /** Every series' total as of the last scrape (built on demand: the ledger itself is the state kept). */
    public Map<CounterSeries, Long> totals() {
        Map<CounterSeries, Long> totals = new HashMap<>(retired);
        for (Entry e : live.values()) {
            totals.merge(e.series, e.total(), Long::sum);
        }
        return totals;
    }
}
