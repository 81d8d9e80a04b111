package io.nftproxy.proxy.metrics;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToIntBiFunction;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
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
 */
// The simpleclient flavour of Micrometer's Prometheus registry is deprecated in favour of the 1.x
// client; the project pins simpleclient 0.16 on purpose: its text and OpenMetrics writers serve
// /metrics from our own probe server, and its hotspot exports give the JVM's series.
@SuppressWarnings("deprecation")
public final class ProxyMetrics implements SyncListener {
    /** kube-proxy's sync buckets: 1 ms doubling 15 times (to 16.4 s). */
    static final Duration[] SYNC_BUCKETS = exponential(0.001, 2, 15);
    /** kube-proxy's network programming buckets: 0, 0.25, 0.5, 1..59, 60..115 by 5, 120..300 by 30 seconds. */
    static final Duration[] PROGRAMMING_BUCKETS = programmingBuckets();

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    /** kube-proxy's series per IP family ({@code ip_family}: IPv4, IPv6): one sync here programs both. */
    private final Map<IpFamily, Timer> sync = new EnumMap<>(IpFamily.class);
    private final Map<IpFamily, Timer> fullSync = new EnumMap<>(IpFamily.class);
    private final Map<IpFamily, Timer> partialSync = new EnumMap<>(IpFamily.class);
    private final Map<IpFamily, Timer> programming = new EnumMap<>(IpFamily.class);
    private final Map<IpFamily, Counter> syncFailures = new EnumMap<>(IpFamily.class);
    private final Map<IpFamily, Timer> reconciles = new EnumMap<>(IpFamily.class);
    private final Map<IpFamily, Counter> reconciledFlows = new EnumMap<>(IpFamily.class);
    private final Map<IpFamily, AtomicLong[]> noLocalCounts = new EnumMap<>(IpFamily.class);
    private final Timer kernelCommit;
    private final Counter endpointChanges;
    private final Counter serviceChanges;
    private final Counter driftRepairs;
    private final Counter driftChecks;
    private final DistributionSummary operations;
    private final DistributionSummary bytes;
    private final AtomicLong lastSyncMillis = new AtomicLong();
    private final AtomicLong lastQueuedMillis = new AtomicLong();
    private final AtomicLong chains = new AtomicLong();
    private final AtomicLong rules = new AtomicLong();
    private final AtomicLong elements = new AtomicLong();
    private final Map<ServicePortName, boolean[]> noLocal = new HashMap<>();
    private final Map<Integer, Counter> healthz = new HashMap<>();
    private final Map<Integer, Counter> livez = new HashMap<>();

    /** nftables mode's metrics. */
    public ProxyMetrics(ObjectStore store) {
        this(store, "nftables");
    }

    /**
     * kube-proxy's metrics as it registers them for {@code mode} (nftables or iptables): the
     * common ones, then the mode's failure counters.
     */
    public ProxyMetrics(ObjectStore store, String mode) {
        for (IpFamily f : IpFamily.values()) {
            String family = family(f);
            sync.put(f, histogram("kubeproxy.sync.proxy.rules.duration", "SyncProxyRules latency in seconds", SYNC_BUCKETS,
                    family));
            fullSync.put(f, histogram("kubeproxy.sync.full.proxy.rules.duration",
                    "SyncProxyRules latency in seconds for full resyncs", SYNC_BUCKETS, family));
            partialSync.put(f, histogram("kubeproxy.sync.partial.proxy.rules.duration",
                    "SyncProxyRules latency in seconds for partial resyncs", SYNC_BUCKETS, family));
            programming.put(f, histogram("kubeproxy.network.programming.duration",
                    "In Cluster Network Programming Latency in seconds", PROGRAMMING_BUCKETS, family));
            Gauge.builder("kubeproxy.sync.proxy.rules.last.timestamp.seconds", lastSyncMillis, v -> v.get() / 1000.0)
                    .tag("ip_family", family).description("The last time proxy rules were successfully synced").register(registry);
            Gauge.builder("kubeproxy.sync.proxy.rules.last.queued.timestamp.seconds", lastQueuedMillis, v -> v.get() / 1000.0)
                    .tag("ip_family", family).description("The last time a sync of proxy rules was queued").register(registry);
            AtomicLong[] counts = {new AtomicLong(), new AtomicLong()};
            noLocalCounts.put(f, counts);
            for (String policy : new String[] {"internal", "external"}) {
                Gauge.builder("kubeproxy.sync.proxy.rules.no.local.endpoints.total", counts[policy.equals("internal") ? 0 : 1],
                                AtomicLong::get).tag("ip_family", family).tag("traffic_policy", policy)
                        .description("Number of services with a Local traffic policy and no endpoints").register(registry);
            }
            if (mode.equals("iptables")) {
                syncFailures.put(f, Counter.builder("kubeproxy.sync.proxy.rules.iptables.restore.failures").tag("ip_family", family)
                        .description("Cumulative proxy iptables restore failures").register(registry));
                // Every sync of the reference backend is a full iptables-restore: no partial one can fail.
                Counter.builder("kubeproxy.sync.proxy.rules.iptables.partial.restore.failures").tag("ip_family", family)
                        .description("Cumulative proxy iptables partial restore failures").register(registry);
            } else {
                syncFailures.put(f, Counter.builder("kubeproxy.sync.proxy.rules.nftables.sync.failures").tag("ip_family", family)
                        .description("Cumulative proxy nftables sync failures").register(registry));
                // Stale chains go in the sync's own transaction here, never in a cleanup of their own that could fail.
                Counter.builder("kubeproxy.sync.proxy.rules.nftables.cleanup.failures").tag("ip_family", family)
                        .description("Cumulative proxy nftables cleanup failures").register(registry);
            }
            reconciles.put(f, histogram("kubeproxy.conntrack.reconciler.sync.duration",
                    "ReconcileConntrackFlowsLatency latency in seconds", SYNC_BUCKETS, family));
            reconciledFlows.put(f, Counter.builder("kubeproxy.conntrack.reconciler.deleted.entries").tag("ip_family", family)
                    .description("Cumulative conntrack flows deleted by conntrack reconciler").register(registry));
        }
        kernelCommit = Timer.builder("nftproxy.kernel.commit.duration").description("Time inside the kernel per sync transaction,"
                + " in seconds").serviceLevelObjectives(SYNC_BUCKETS).register(registry);
        Gauge.builder("kubeproxy.sync.proxy.rules.endpoint.changes.pending", store, s -> s.pending()[1])
                .description("Pending proxy rules Endpoint changes").register(registry);
        Gauge.builder("kubeproxy.sync.proxy.rules.service.changes.pending", store, s -> s.pending()[0])
                .description("Pending proxy rules Service changes").register(registry);
        endpointChanges = Counter.builder("kubeproxy.sync.proxy.rules.endpoint.changes")
                .description("Cumulative proxy rules Endpoint changes").register(registry);
        serviceChanges = Counter.builder("kubeproxy.sync.proxy.rules.service.changes")
                .description("Cumulative proxy rules Service changes").register(registry);
        for (int code : new int[] {200, 503}) {
            healthz.put(code, Counter.builder("kubeproxy.proxy.healthz").tag("code", Integer.toString(code))
                    .description("Cumulative proxy healthz HTTP status").register(registry));
            livez.put(code, Counter.builder("kubeproxy.proxy.livez").tag("code", Integer.toString(code))
                    .description("Cumulative proxy livez HTTP status").register(registry));
        }
        Gauge.builder("nftproxy.service.conflicts", store, ObjectStore::conflicts)
                .description("Frontends (address, protocol and port, or NodePort) claimed by more than one service port")
                .register(registry);
        Gauge.builder("nftproxy.owned.objects", chains, AtomicLong::get).tag("kind", "chains")
                .description("nf_tables objects nftproxy owns, both families").register(registry);
        Gauge.builder("nftproxy.owned.objects", rules, AtomicLong::get).tag("kind", "rules")
                .description("nf_tables objects nftproxy owns, both families").register(registry);
        Gauge.builder("nftproxy.owned.objects", elements, AtomicLong::get).tag("kind", "set_elements")
                .description("nf_tables objects nftproxy owns, both families").register(registry);
        operations = DistributionSummary.builder("nftproxy.transaction.operations")
                .description("Operations per sync transaction").register(registry);
        bytes = DistributionSummary.builder("nftproxy.transaction.bytes").baseUnit("bytes")
                .description("Netlink bytes per sync transaction").register(registry);
        driftRepairs = Counter.builder("nftproxy.drift.repairs")
                .description("Repairs committed after someone else changed our tables, one per change").register(registry);
        driftChecks = Counter.builder("nftproxy.drift.checks")
                .description("Re-assertions of our rules queued because someone else committed while we did").register(registry);
        io.prometheus.client.hotspot.DefaultExports.register(registry.getPrometheusRegistry());
    }

    private Timer histogram(String name, String help, Duration[] buckets, String family) {
        return Timer.builder(name).description(help).tag("ip_family", family).serviceLevelObjectives(buckets).register(registry);
    }

    /**
     * iptables mode's rule counts, per family and table (filter, nat), read from {@code rules}
     * at each scrape: {@code sync_proxy_rules_iptables_total} (the rules owned) and
     * {@code _last} (those the last sync wrote).
     */
    public void iptablesRules(ToIntBiFunction<IpFamily, String> owned, ToIntBiFunction<IpFamily, String> lastWritten) {
        for (IpFamily f : IpFamily.values()) {
            for (String table : new String[] {"filter", "nat"}) {
                Gauge.builder("kubeproxy.sync.proxy.rules.iptables.total", () -> owned.applyAsInt(f, table))
                        .tag("ip_family", family(f)).tag("table", table)
                        .description("Total number of iptables rules owned by kube-proxy").register(registry);
                Gauge.builder("kubeproxy.sync.proxy.rules.iptables.last", () -> lastWritten.applyAsInt(f, table))
                        .tag("ip_family", family(f)).tag("table", table)
                        .description("Number of iptables rules written by kube-proxy in last sync").register(registry);
            }
        }
    }

    /** kube-proxy's label value: v1.IPFamily. */
    static String family(IpFamily f) {
        return f == IpFamily.V4 ? "IPv4" : "IPv6";
    }

    /** The conntrack reconciler's run for one family ({@link io.nftproxy.proxy.sync.StaleUdpFlows}). */
    public void reconciled(IpFamily f, long nanos, int deleted) {
        reconciles.get(f).record(nanos, TimeUnit.NANOSECONDS);
        reconciledFlows.get(f).increment(deleted);
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

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    public void healthz(int code) {
        healthz.computeIfAbsent(code, c -> Counter.builder("kubeproxy.proxy.healthz").tag("code", Integer.toString(c))
                .register(registry)).increment();
    }

    public void livez(int code) {
        livez.computeIfAbsent(code, c -> Counter.builder("kubeproxy.proxy.livez").tag("code", Integer.toString(c))
                .register(registry)).increment();
    }

    @Override
    public void checkQueued() {
        driftChecks.increment();
    }

    /** One repair committed, however many foreign events led to it. */
    @Override
    public void repaired() {
        driftRepairs.increment();
    }

    @Override
    public void queued(long epochMillis) {
        lastQueuedMillis.set(epochMillis);
    }

    @Override
    public void synced(SyncResult r, long nanos, ObjectStore.Snapshot snap) {
        for (IpFamily f : IpFamily.values()) {
            sync.get(f).record(nanos, TimeUnit.NANOSECONDS);
            (r.full() ? fullSync : partialSync).get(f).record(nanos, TimeUnit.NANOSECONDS);
        }
        kernelCommit.record(r.commit().kernelNanos(), TimeUnit.NANOSECONDS);
        operations.record(r.commit().operations());
        bytes.record(r.commit().bytes());
        lastSyncMillis.set(System.currentTimeMillis());
        serviceChanges.increment(snap.serviceChanges());
        endpointChanges.increment(snap.endpointChanges());
        Instant now = Instant.now();
        for (ObjectStore.Trigger t : snap.triggerTimes()) {
            if (!t.at().isAfter(now)) {
                for (IpFamily f : t.families()) {
                    programming.get(f).record(Duration.between(t.at(), now));
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
        syncFailures.values().forEach(Counter::increment);
    }
}
