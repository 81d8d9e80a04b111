package io.nftproxy.proxy.metrics;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;
import java.util.function.ToIntBiFunction;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.Counter;
import io.prometheus.client.Gauge;
import io.prometheus.client.Histogram;
import io.prometheus.client.Summary;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.topology.EndpointSelection;
import io.nftproxy.proxy.topology.EndpointSelector;

/**
 * kube-proxy's metrics under kube-proxy's names, types, labels and buckets, so dashboards and
 * alerts written for kube-proxy keep working, plus nftproxy's own (nftproxy_*).
 *
 * <p>Written on the Prometheus client itself (simpleclient 0.16, whose text and OpenMetrics
 * writers serve /metrics from our probe server and whose hotspot exports give the JVM's series),
 * not through Micrometer's facade over it: the facade was 1.2 MB of the product jar and 895
 * classes for names this class spells out anyway, and added a {@code _max} gauge per histogram
 * that kube-proxy does not serve.
 */
public final class ProxyMetrics implements SyncListener {
    /** kube-proxy's sync buckets: 1 ms doubling 15 times (to 16.4 s). */
    static final Duration[] SYNC_BUCKETS = exponential(0.001, 2, 15);
    /** kube-proxy's network programming buckets: 0, 0.25, 0.5, 1..59, 60..115 by 5, 120..300 by 30 seconds. */
    static final Duration[] PROGRAMMING_BUCKETS = programmingBuckets();
    private static final String FAMILY = "ip_family";

    private final CollectorRegistry registry = new CollectorRegistry();
    /** kube-proxy's series per IP family ({@code ip_family}: IPv4, IPv6): one sync here programs both. */
    private final Histogram sync;
    private final Histogram fullSync;
    private final Histogram partialSync;
    private final Histogram programming;
    private final Counter syncFailures;
    private final Histogram reconciles;
    private final Counter reconciledFlows;
    private final Map<IpFamily, AtomicLong[]> noLocalCounts = new EnumMap<>(IpFamily.class);
    private final Histogram kernelCommit;
    private final Counter endpointChanges;
    private final Counter serviceChanges;
    private final Counter driftRepairs;
    private final Counter driftChecks;
    private final Summary operations;
    private final Summary bytes;
    private final AtomicLong lastSyncMillis = new AtomicLong();
    private final AtomicLong lastQueuedMillis = new AtomicLong();
    private final AtomicLong chains = new AtomicLong();
    private final AtomicLong rules = new AtomicLong();
    private final AtomicLong elements = new AtomicLong();
    private final Map<ServicePortName, boolean[]> noLocal = new HashMap<>();
    private final Counter healthz;
    private final Counter livez;

    /** nftables mode's metrics. */
    public ProxyMetrics(ObjectStore store) {
        this(store, "nftables");
    }

    /**
     * kube-proxy's metrics as it registers them for {@code mode} (nftables or iptables): the
     * common ones, then the mode's failure counters.
     */
    public ProxyMetrics(ObjectStore store, String mode) {
        sync = histogram("kubeproxy_sync_proxy_rules_duration_seconds", "SyncProxyRules latency in seconds", SYNC_BUCKETS,
                FAMILY);
        fullSync = histogram("kubeproxy_sync_full_proxy_rules_duration_seconds",
                "SyncProxyRules latency in seconds for full resyncs", SYNC_BUCKETS, FAMILY);
        partialSync = histogram("kubeproxy_sync_partial_proxy_rules_duration_seconds",
                "SyncProxyRules latency in seconds for partial resyncs", SYNC_BUCKETS, FAMILY);
        programming = histogram("kubeproxy_network_programming_duration_seconds",
                "In Cluster Network Programming Latency in seconds", PROGRAMMING_BUCKETS, FAMILY);
        Gauge lastSync = gauge("kubeproxy_sync_proxy_rules_last_timestamp_seconds",
                "The last time proxy rules were successfully synced", FAMILY);
        Gauge lastQueued = gauge("kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds",
                "The last time a sync of proxy rules was queued", FAMILY);
        Gauge noLocalGauge = gauge("kubeproxy_sync_proxy_rules_no_local_endpoints_total",
                "Number of services with a Local traffic policy and no endpoints", FAMILY, "traffic_policy");
        boolean iptables = mode.equals("iptables");
        // Every sync of the reference backend is a full iptables-restore: no partial one can fail;
        // in nftables mode stale chains go in the sync's own transaction, never in a cleanup of
        // their own that could fail. Both are served, at zero, as kube-proxy serves them.
        syncFailures = iptables
                ? counter("kubeproxy_sync_proxy_rules_iptables_restore_failures", "Cumulative proxy iptables restore failures",
                        FAMILY)
                : counter("kubeproxy_sync_proxy_rules_nftables_sync_failures", "Cumulative proxy nftables sync failures", FAMILY);
        Counter neverFailing = iptables
                ? counter("kubeproxy_sync_proxy_rules_iptables_partial_restore_failures",
                        "Cumulative proxy iptables partial restore failures", FAMILY)
                : counter("kubeproxy_sync_proxy_rules_nftables_cleanup_failures", "Cumulative proxy nftables cleanup failures",
                        FAMILY);
        reconciles = histogram("kubeproxy_conntrack_reconciler_sync_duration_seconds",
                "ReconcileConntrackFlowsLatency latency in seconds", SYNC_BUCKETS, FAMILY);
        reconciledFlows = counter("kubeproxy_conntrack_reconciler_deleted_entries",
                "Cumulative conntrack flows deleted by conntrack reconciler", FAMILY);
        for (IpFamily f : IpFamily.values()) {
            String family = family(f);
            // Every labelled series is served from the start, at zero: a dashboard's rate() sees
            // the first increment.
            for (Histogram h : new Histogram[] {sync, fullSync, partialSync, programming, reconciles}) {
                h.labels(family);
            }
            syncFailures.labels(family);
            neverFailing.labels(family);
            reconciledFlows.labels(family);
            track(lastSync, () -> lastSyncMillis.get() / 1000.0, family);
            track(lastQueued, () -> lastQueuedMillis.get() / 1000.0, family);
            AtomicLong[] counts = {new AtomicLong(), new AtomicLong()};
            noLocalCounts.put(f, counts);
            track(noLocalGauge, counts[0]::get, family, "internal");
            track(noLocalGauge, counts[1]::get, family, "external");
        }
        kernelCommit = histogram("nftproxy_kernel_commit_duration_seconds",
                "Time inside the kernel per sync transaction, in seconds", SYNC_BUCKETS);
        track(gauge("kubeproxy_sync_proxy_rules_endpoint_changes_pending", "Pending proxy rules Endpoint changes"),
                () -> store.pending()[1]);
        track(gauge("kubeproxy_sync_proxy_rules_service_changes_pending", "Pending proxy rules Service changes"),
                () -> store.pending()[0]);
        endpointChanges = counter("kubeproxy_sync_proxy_rules_endpoint_changes", "Cumulative proxy rules Endpoint changes");
        serviceChanges = counter("kubeproxy_sync_proxy_rules_service_changes", "Cumulative proxy rules Service changes");
        healthz = counter("kubeproxy_proxy_healthz", "Cumulative proxy healthz HTTP status", "code");
        livez = counter("kubeproxy_proxy_livez", "Cumulative proxy livez HTTP status", "code");
        for (String code : new String[] {"200", "503"}) {
            healthz.labels(code);
            livez.labels(code);
        }
        track(gauge("nftproxy_service_conflicts",
                "Frontends (address, protocol and port, or NodePort) claimed by more than one service port"), store::conflicts);
        Gauge owned = gauge("nftproxy_owned_objects", "nf_tables objects nftproxy owns, both families", "kind");
        track(owned, chains::get, "chains");
        track(owned, rules::get, "rules");
        track(owned, elements::get, "set_elements");
        operations = Summary.build("nftproxy_transaction_operations", "Operations per sync transaction").register(registry);
        bytes = Summary.build("nftproxy_transaction_bytes", "Netlink bytes per sync transaction").register(registry);
        driftRepairs = counter("nftproxy_drift_repairs", "Repairs committed after someone else changed our tables, one per change");
        driftChecks = counter("nftproxy_drift_checks",
                "Re-assertions of our rules queued because someone else committed while we did");
        io.prometheus.client.hotspot.DefaultExports.register(registry);
    }

    private Histogram histogram(String name, String help, Duration[] buckets, String... labels) {
        double[] seconds = new double[buckets.length];
        for (int i = 0; i < buckets.length; i++) {
            seconds[i] = buckets[i].toNanos() / 1e9;
        }
        return Histogram.build(name, help).labelNames(labels).buckets(seconds).register(registry);
    }

    /** A counter; the client adds {@code _total} to the name, as kube-proxy's series have it. */
    private Counter counter(String name, String help, String... labels) {
        return Counter.build(name, help).labelNames(labels).register(registry);
    }

    private Gauge gauge(String name, String help, String... labels) {
        return Gauge.build(name, help).labelNames(labels).register(registry);
    }

    /** One series of {@code gauge}, read from {@code value} at each scrape. */
    private static void track(Gauge gauge, DoubleSupplier value, String... labelValues) {
        gauge.setChild(new Gauge.Child() {
            @Override
            public double get() {
                return value.getAsDouble();
            }
        }, labelValues);
    }

    /**
     * iptables mode's rule counts, per family and table (filter, nat), read from {@code rules}
     * at each scrape: {@code sync_proxy_rules_iptables_total} (the rules owned) and
     * {@code _last} (those the last sync wrote).
     */
    public void iptablesRules(ToIntBiFunction<IpFamily, String> owned, ToIntBiFunction<IpFamily, String> lastWritten) {
        Gauge total = gauge("kubeproxy_sync_proxy_rules_iptables_total", "Total number of iptables rules owned by kube-proxy",
                FAMILY, "table");
        Gauge last = gauge("kubeproxy_sync_proxy_rules_iptables_last", "Number of iptables rules written by kube-proxy in last sync",
                FAMILY, "table");
        for (IpFamily f : IpFamily.values()) {
            for (String table : new String[] {"filter", "nat"}) {
                track(total, () -> owned.applyAsInt(f, table), family(f), table);
                track(last, () -> lastWritten.applyAsInt(f, table), family(f), table);
            }
        }
    }

    /** kube-proxy's label value: v1.IPFamily. */
    static String family(IpFamily f) {
        return f == IpFamily.V4 ? "IPv4" : "IPv6";
    }

    /** The conntrack reconciler's run for one family ({@link io.nftproxy.proxy.sync.StaleUdpFlows}). */
    public void reconciled(IpFamily f, long nanos, int deleted) {
        reconciles.labels(family(f)).observe(nanos / 1e9);
        reconciledFlows.labels(family(f)).inc(deleted);
    }

    static Duration[] exponential(double start, double factor, int count) {
        Duration[] out = new Duration[count];
        double v = start;
        for (int i = 0; i < count; i++) {
            out[i] = Duration.ofNanos(Math.round(v * 1e9));
            v *= factor;
        }
        return out;
    }

    static Duration[] programmingBuckets() {
        List<Duration> out = new ArrayList<>();
        out.add(Duration.ZERO.plusNanos(1)); // kube-proxy's list starts with a 0 bucket
        out.add(Duration.ofMillis(250));
        out.add(Duration.ofMillis(500));
        for (int s = 1; s <= 59; s++) {
            out.add(Duration.ofSeconds(s));
        }
        for (int s = 60; s <= 115; s += 5) {
            out.add(Duration.ofSeconds(s));
        }
        for (int s = 120; s <= 300; s += 30) {
            out.add(Duration.ofSeconds(s));
        }
        return out.toArray(new Duration[0]);
    }

    /** The registry /metrics serves; the per-service counters register in it too. */
    public CollectorRegistry registry() {
        return registry;
    }

    public void healthz(int code) {
        healthz.labels(Integer.toString(code)).inc();
    }

    public void livez(int code) {
        livez.labels(Integer.toString(code)).inc();
    }

    @Override
    public void checkQueued() {
        driftChecks.inc();
    }

    /** One repair committed, however many foreign events led to it. */
    @Override
    public void repaired() {
        driftRepairs.inc();
    }

    @Override
    public void queued(long epochMillis) {
        lastQueuedMillis.set(epochMillis);
    }

    @Override
    public void synced(SyncResult r, long nanos, ObjectStore.Snapshot snap) {
        for (IpFamily f : IpFamily.values()) {
            sync.labels(family(f)).observe(nanos / 1e9);
            (r.full() ? fullSync : partialSync).labels(family(f)).observe(nanos / 1e9);
        }
        kernelCommit.observe(r.commit().kernelNanos() / 1e9);
        operations.observe(r.commit().operations());
        bytes.observe(r.commit().bytes());
        lastSyncMillis.set(System.currentTimeMillis());
        serviceChanges.inc(snap.serviceChanges());
        endpointChanges.inc(snap.endpointChanges());
        Instant now = Instant.now();
        for (ObjectStore.Trigger t : snap.triggerTimes()) {
            if (!t.at().isAfter(now)) {
                for (IpFamily f : t.families()) {
                    programming.labels(family(f)).observe(Duration.between(t.at(), now).toNanos() / 1e9);
                }
            }
        }
        chains.set(r.chains());
        rules.set(r.rules());
        elements.set(r.elements());
        countNoLocal(snap, r.full());
    }

    /** Services with a Local policy and no local endpoints, kept up to date for changed services only. */
    private void countNoLocal(ObjectStore.Snapshot snap, boolean full) {
        ProxyState state = snap.state();
        if (full || snap.nodeChanged()) {
            // Over the services themselves: at 100,000 a copy of their names and a lookup each
            // were 90 ms of the sync thread after every full sync.
            noLocal.clear();
            state.services().forEach((id, s) -> noteNoLocal(id, s, state));
        } else {
            for (ServicePortName id : snap.changed()) {
                noteNoLocal(id, state.services().get(id), state);
            }
        }
        for (IpFamily f : IpFamily.values()) {
            int in = f == IpFamily.V4 ? 2 : 3;
            noLocalCounts.get(f)[0].set(noLocal.values().stream().filter(b -> b[in] && b[0]).count());
            noLocalCounts.get(f)[1].set(noLocal.values().stream().filter(b -> b[in] && b[1]).count());
        }
    }

    /** Records whether a service port (null: gone) has a Local policy and no local endpoints. */
    private void noteNoLocal(ServicePortName id, ServicePort s, ProxyState state) {
        // Only a Local policy can leave a service without local endpoints: the others need no
        // selection (at 100,000 services of which a twentieth Local, a full sync's selections
        // here were a quarter of a second of the sync thread in a profile).
        if (s == null || !(s.internalPolicyLocal() || (s.externalPolicyLocal() && s.hasExternal()))) {
            noLocal.remove(id);
            return;
        }
        EndpointSelection sel = EndpointSelector.select(s, state.endpointsOf(id), state.node());
        boolean internal = s.internalPolicyLocal() && sel.local().isEmpty();
        boolean external = s.externalPolicyLocal() && s.hasExternal() && sel.local().isEmpty();
        if (internal || external) {
            noLocal.put(id, new boolean[] {internal, external, s.inFamily(IpFamily.V4), s.inFamily(IpFamily.V6)});
        } else {
            noLocal.remove(id);
        }
    }

    @Override
    public void failed(boolean full, Exception error) {
        for (IpFamily f : IpFamily.values()) {
            syncFailures.labels(family(f)).inc();
        }
    }
}
