package io.nftproxy.proxy.server;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.proxy.render.CountedSets;
import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.ct.ConntrackClient;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.counters.ServiceCounters;
import io.nftproxy.proxy.events.EventRecorder;
import io.nftproxy.proxy.health.HealthServer;
import io.nftproxy.proxy.health.HealthState;
import io.nftproxy.proxy.health.ServiceHealthServers;
import io.nftproxy.proxy.http.ProbeServer;
import io.nftproxy.proxy.iptables.IptablesSyncer;
import io.nftproxy.proxy.metrics.MetricsEndpoints;
import io.nftproxy.proxy.metrics.ProxyMetrics;
import io.nftproxy.proxy.metrics.ZPages;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.Backend;
import io.nftproxy.proxy.sync.DriftWatcher;
import io.nftproxy.proxy.sync.StaleUdpFlows;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.proxy.sync.SyncLoop;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;

/**
 * The long-running proxy around a store fed by a source: the sync loop, kube-proxy's metrics and
 * health endpoints, the healthCheckNodePort servers, and drift repair. Closing it stops all of
 * them and leaves the rules in the kernel, as kube-proxy does.
 */
public final class ProxyServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProxyServer.class);
    private final List<AutoCloseable> parts = new ArrayList<>();
    private final ProxyMetrics metrics;
    private final HealthState health;
    private final SyncLoop loop;
    private final Backend backend;
    private final Duration canaryPeriod;
    private volatile Thread canaryWatch;
    private volatile boolean closed;
    private final EventRecorder events;
    private final EventRecorder.Regarding node;
    private static final long BIND_RETRY_MILLIS = 5000;
    private ServiceCounters counters;
    private HealthServer healthServer;
    private ProbeServer metricsServer;

    /**
     * @param metricsAt where to serve /metrics, null for nowhere
     * @param healthAt  where to serve /healthz and /livez, null for nowhere
     */
    public ProxyServer(ProxyConfig cfg, ObjectStore store, NftClient client, NetNamespace netns,
                       InetSocketAddress metricsAt, InetSocketAddress healthAt, SyncListener extra) throws IOException {
        this(cfg, store, new Syncer(client, new NftRenderer(cfg), cfg.table()), client, netns, metricsAt, healthAt, extra,
                EventRecorder.NONE);
    }

    /**
     * Over any backend; {@code driftClient}, when given, watches our nf_tables table for changes by
     * others (the iptables reference backend has none); {@code events} hears of a health or
     * metrics server that cannot listen, as kube-proxy records it.
     */
    public ProxyServer(ProxyConfig cfg, ObjectStore store, Backend backend, NftClient driftClient, NetNamespace netns,
                       InetSocketAddress metricsAt, InetSocketAddress healthAt, SyncListener extra, EventRecorder events)
            throws IOException {
        this(cfg, store, backend, driftClient, netns, metricsAt, healthAt, extra, events, ZPages.of("nftproxy", Map.of()));
    }

    /** The same, with the command line's name and flags for the metrics port's /statusz and /flagz. */
    public ProxyServer(ProxyConfig cfg, ObjectStore store, Backend backend, NftClient driftClient, NetNamespace netns,
                       InetSocketAddress metricsAt, InetSocketAddress healthAt, SyncListener extra, EventRecorder events,
                       ZPages zpages) throws IOException {
        this.backend = backend;
        this.events = events;
        this.node = EventRecorder.Regarding.node(cfg.hostname());
        this.canaryPeriod = cfg.syncPeriod();
        metrics = new ProxyMetrics(store, backend instanceof IptablesSyncer ? "iptables" : "nftables");
        if (backend instanceof IptablesSyncer ips) {
            metrics.iptablesRules(ips::rules, ips::rules); // every sync writes all of them
        }
        // kube-proxy's health timeout: twice the sync period.
        health = new HealthState(Clock.systemUTC(), cfg.syncPeriod().multipliedBy(2));
        // Nothing is programmed yet: /healthz says so until the first sync. Nothing is queued either:
        // a proxy waiting for its API server is alive (/livez 200), as kube-proxy's is.
        health.nodeMissing(store.nodeMissing());
        ServiceHealthServers hc = new ServiceHealthServers(netns, health, cfg, events);
        SyncListener probes = new SyncListener() {
            @Override
            public void queued(long epochMillis) {
                health.queued();
            }

            @Override
            public void driftSeen() {
                health.rulesMissing(); // until the repair is committed
            }

            @Override
            public void synced(SyncResult r, long nanos, ObjectStore.Snapshot snap) {
                // first: a probe that sees "synced" finds the servers open
                hc.update(snap.state(), r.full() || snap.nodeChanged() ? null : snap.changed());
                health.synced();
                health.nodeDeleting(snap.state().node().deleting());
                health.nodeMissing(store.nodeMissing());
            }
        };
        ConntrackClient conntrack;
        try {
            conntrack = ConntrackClient.open(netns);
        } catch (NftException e) {
            throw new IOException(e.getMessage(), e);
        }
        parts.add(conntrack);
        List<SyncListener> listeners = new ArrayList<>(List.of(extra, metrics, probes, new StaleUdpFlows(conntrack, metrics::reconciled)));
        if (cfg.serviceCounters() && backend instanceof Syncer) {
            // A socket of its own: scrapes run on the metrics server's thread, beside the sync loop's.
            NftClient counterClient;
            try {
                counterClient = NftClient.open(netns);
            } catch (NftException e) {
                close();
                throw new IOException(e.getMessage(), e);
            }
            parts.add(counterClient);
            counters = new ServiceCounters(counterClient, cfg.table(), CountedSets.countedSets(cfg),
                    ServiceCounters.HeldElements.of((Syncer) backend));
            counters.register(metrics.registry());
            listeners.add(counters);
        }
        loop = new SyncLoop(store, backend, cfg.minSyncPeriod(), cfg.fullSyncPeriod(), SyncListener.all(listeners));
        parts.add(hc);
        try {
            if (metricsAt != null) {
                String mode = backend instanceof IptablesSyncer ? "iptables" : "nftables";
                bind("--metrics-bind-address", "FailedToStartMetricServer", metricsAt, cfg.bindHardFail(), () -> metricsServer = ProbeServer.bind("metrics",
                        metricsAt, MetricsEndpoints.routes(metrics.registry(), mode, cfg, zpages), null));
            }
            if (healthAt != null) {
                bind("--healthz-bind-address", "FailedToStartProxierHealthcheck", healthAt, cfg.bindHardFail(),
                        () -> healthServer = new HealthServer(healthAt, health, metrics::healthz, metrics::livez));
            }
            if (driftClient != null) {
                DriftWatcher drift = new DriftWatcher(netns, cfg.table(), driftClient.portId(), loop::requestRepair,
                        loop::requestCheck);
                parts.add(drift);
                if (backend instanceof Syncer s) {
                    // A re-assertion's transactions re-add what is there, which makes no events:
                    // they commit while the watcher listens, so a neighbour's commit meanwhile
                    // does not ask for yet another check.
                    s.commitThrough(tx -> drift.commitQuietly(driftClient, tx), driftClient::commit);
                }
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * Opens a server; its address taken is fatal with {@code hardFail}, else said and retried every
     * 5 s, as kube-proxy does; either way recorded once as a Warning event on the Node ({@code reason}).
     */
    @FunctionalInterface
    private interface Binder {
        AutoCloseable bind() throws IOException;
    }

    private void bind(String flag, String reason, InetSocketAddress at, boolean hardFail, Binder binder) throws IOException {
        String where = flag + " " + at.getHostString() + ":" + at.getPort();
        try {
            addPart(binder.bind());
        } catch (BindException e) {
            events.warning(node, reason, "StartKubeProxy", where + ": " + e.getMessage());
            if (hardFail) {
                throw new IOException(where + ": " + e.getMessage(), e);
            }
            LOG.error("{}: {}; retrying every 5 s (bindAddressHardFail is false)", where, e.getMessage());
            Thread t = new Thread(() -> {
                while (!closed) {
                    try {
                        Thread.sleep(BIND_RETRY_MILLIS); // kube-proxy retries its servers every 5 s
                        addPart(binder.bind());
                        LOG.info("{}: bound", where);
                        return;
                    } catch (BindException again) {
                        LOG.debug("{}: {}", where, again.getMessage());
                    } catch (IOException | InterruptedException other) {
                        return;
                    }
                }
            }, "bind-retry");
            t.setDaemon(true);
            t.start();
        }
    }

    private synchronized void addPart(AutoCloseable part) throws IOException {
        if (closed) {
            try {
                part.close();
            } catch (Exception ignored) {
                // closing anyway
            }
            return;
        }
        parts.add(part);
    }

    public void start() {
        loop.start();
        if (backend instanceof IptablesSyncer ipt) {
            watchCanaries(ipt);
        }
    }

    /**
     * The iptables backend has no kernel events to tell it that someone flushed its chains: as
     * kube-proxy does, it looks for its canary chains every sync period, and resyncs everything
     * when one is gone (the nftables backend hears of drift at once, through the kernel's events).
     */
    private void watchCanaries(IptablesSyncer ipt) {
        Thread t = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(canaryPeriod.toMillis()); // the period between checks, as kube-proxy's monitor
                } catch (InterruptedException e) {
                    return;
                }
                try {
                    if (!ipt.canariesPresent()) {
                        LOG.warn("iptables: a {} chain is gone (someone flushed the tables?): resyncing everything",
                                "KUBE-PROXY-CANARY");
                        loop.requestRepair();
                    }
                } catch (RuntimeException e) {
                    LOG.debug("checking the iptables canaries failed: {}", e.getMessage());
                }
            }
        }, "iptables-canary");
        t.setDaemon(true);
        t.start();
        canaryWatch = t;
    }

    public int metricsPort() {
        return metricsServer == null ? -1 : metricsServer.port();
    }

    public int healthPort() {
        return healthServer == null ? -1 : healthServer.port();
    }

    public ProxyMetrics metrics() {
        return metrics;
    }

    /** The service counters with --service-counters, else null. */
    public ServiceCounters counters() {
        return counters;
    }

    public HealthState health() {
        return health;
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        Thread watch = canaryWatch;
        if (watch != null) {
            watch.interrupt();
        }
        if (loop != null) {
            loop.close();
        }
        for (int i = parts.size() - 1; i >= 0; i--) {
            try {
                parts.get(i).close();
            } catch (Exception ignored) {
                // closing the rest anyway
            }
        }
    }
}
