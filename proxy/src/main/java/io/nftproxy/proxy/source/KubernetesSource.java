package io.nftproxy.proxy.source;

import java.io.IOException;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDR;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Informable;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.HttpClientUtils;
import io.nftproxy.proxy.events.ApiEvents;
import io.nftproxy.proxy.events.EventRecorder;
import io.nftproxy.proxy.source.client.RateLimitedHttpClient;

/**
 * A live cluster as the source: shared informers on Services, EndpointSlices and this node's Node
 * object, which list, watch, re-list after a lost watch and resync periodically. Each object is
 * converted to the compact model as it arrives; the informers' own caches keep only each object's
 * key and resource version ({@link KeyVersionStore}), not the object, and no index.
 */
public final class KubernetesSource implements Source {
    private static final Logger LOG = LoggerFactory.getLogger(KubernetesSource.class);

    static {
        // The JDK's HTTP client retries a refused connection once on the channel it has just
        // closed, and reports the ClosedChannelException of that retry instead of the refusal
        // (Java 17): "failed: ClosedChannelException" instead of "Connection refused". The
        // informers retry anyway; without the JDK's retry a failed attempt says why it failed.
        if (System.getProperty("jdk.httpclient.disableRetryConnect") == null) {
            System.setProperty("jdk.httpclient.disableRetryConnect", "true");
        }
    }
    private long resyncMillis = 15 * 60 * 1000L;
    /**
     * Services and EndpointSlices are listed in pages of this many (client-go's pager's size):
     * each page is read, converted to the model and let go before the next, so a listing never
     * holds the whole cluster at once, as fabric8 objects or as the response's bytes. Unpaged, a
     * start at 10,000 services x 10 held a 12 MB response and all 10,000 slices as objects at
     * once, and the heap grown for them stayed resident. And for as long as the process ran: the
     * JDK's HTTP client keeps the exchange that opened a connection, response body and all (its
     * connect timer holds it; JDK 17), and the listings open the API server's connections, so
     * the daemon kept both listings' whole bodies, 15 MB of live heap at 10,000 services (a heap
     * dump of the daemon as the DaemonSet runs it); paged, at most a page each. The later pages
     * take no rate-limit token ({@code RateLimitedHttpClient#laterPage}).
     */
    static final long LIST_PAGE = 500;
    private static final long WATCH_CHECK_MILLIS = 1000;

    private final KubernetesClient client;
    private final boolean ownsClient;
    private final ObjectStore store;
    private volatile boolean closed;
    private final ApiEvents events;
    private SharedIndexInformer<Service> services;
    private SharedIndexInformer<EndpointSlice> slices;
    private SharedIndexInformer<Node> nodes;
    private SharedIndexInformer<ServiceCIDR> serviceCidrs;
    private boolean watchServiceCidrs = true;
    private final AtomicLong resyncs = new AtomicLong();

    /** From a kubeconfig file, or in-cluster configuration when {@code kubeconfig} is null. */
    public KubernetesSource(Path kubeconfig, ObjectStore store) throws IOException {
        this(kubeconfig == null ? new ConfigBuilder().build() : Kubeconfig.load(kubeconfig, null), store);
    }

    /** From a client configuration (see {@link Kubeconfig}), with kube-proxy's default request limit. */
    public KubernetesSource(Config cfg, ObjectStore store) {
        this(cfg, store, 5, 10);
    }

    /**
     * From a client configuration, its requests limited as kube-proxy's are by clientConnection's
     * {@code qps} and {@code burst} (see {@link RateLimitedHttpClient#factory}).
     */
    public KubernetesSource(Config cfg, ObjectStore store, float qps, int burst) {
        this(new KubernetesClientBuilder().withConfig(withoutRequestRetries(cfg))
                .withHttpClientFactory(RateLimitedHttpClient.factory(HttpClientUtils.getHttpClientFactory(), qps, burst))
                .build(), true, store);
    }

    /**
     * A failed request goes straight to the informer that made it, which says so and tries again
     * with its own backoff, as client-go's reflectors do. fabric8 would otherwise retry every
     * request that failed with an I/O error ten times first, over 22 s, without a word above
     * debug level: a node whose API server is away would say nothing for that long.
     */
    private static Config withoutRequestRetries(Config cfg) {
        cfg.setRequestRetryBackoffLimit(0);
        return cfg;
    }

    /** Over a client the caller owns (tests use the mock server's). */
    public KubernetesSource(KubernetesClient client, ObjectStore store) {
        this(client, false, store);
    }

    private KubernetesSource(KubernetesClient client, boolean ownsClient, ObjectStore store) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.store = store;
        this.events = new ApiEvents(client, "nftproxy", store.node().name());
        store.expectNode(); // a cluster has a Node object for this host; until it is seen, /healthz says so
    }

    /** How often the informers hand every object over again (kube-proxy's configSyncPeriod; 15 minutes by default). */
    public void resyncEvery(Duration period) {
        resyncMillis = period.toMillis();
    }

    /**
     * Whether to watch the cluster's ServiceCIDR objects (as kube-proxy's nftables mode does): not
     * when {@code --service-cidr} overrides them, nor beside kube-proxy.
     */
    public void watchServiceCidrs(boolean watch) {
        watchServiceCidrs = watch;
    }

    /** The API server's address, for log lines. */
    public String server() {
        String url = client.getConfiguration().getMasterUrl();
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }

    @Override
    public String where() {
        return "API server " + server();
    }

    /** Informers always watch once they have listed; a one-shot command closes them after the listing. */
    @Override
    public CompletableFuture<Void> listAndWatch(boolean watch) {
        return startWatching();
    }

    /** Starts the informers and waits until each has listed once (at most 60 s: tests and benchmarks). */
    public void start() throws Exception {
        try {
            startWatching().get(60, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new IOException("API server " + server() + " did not answer a listing within 60 s");
        }
    }

    /**
     * Starts the informers and returns at once. They list, then watch; a failed listing or watch
     * is retried with backoff for as long as the source is open (client-go's reflectors never give
     * up either), each failure said in one line naming the server and the reason. The future
     * completes once each informer has listed once.
     */
    public CompletableFuture<Void> startWatching() {
        // The API server applies the selection; KubeModel applies it again on arrival, so an
        // object whose labels move it out of the selection goes whichever way the news comes.
        String selector = store.selection().labelSelector();
        services = keysOnly(client.services().inAnyNamespace().withLabelSelector(selector).withLimit(LIST_PAGE), Service::new);
        CompletableFuture<Void> serviceEvents = deliverTo(services, "Service");
        slices = keysOnly(client.discovery().v1().endpointSlices().inAnyNamespace().withLabelSelector(selector)
                .withLimit(LIST_PAGE), EndpointSlice::new);
        CompletableFuture<Void> sliceEvents = deliverTo(slices, "EndpointSlice");
        String node = store.node().name();
        nodes = keysOnly(client.nodes().withField("metadata.name", node), Node::new);
        CompletableFuture<Void> nodeEvents = deliverTo(nodes, "Node");
        List<CompletableFuture<Void>> listed = new ArrayList<>();
        if (watchServiceCidrs) {
            serviceCidrs = keysOnly(client.network().v1().serviceCIDRs(), ServiceCIDR::new);
            CompletableFuture<Void> cidrEvents = deliverTo(serviceCidrs, "ServiceCIDR");
            listed.add(startServiceCidrs().thenCompose(served -> served ? cidrEvents : CompletableFuture.completedFuture(null)));
        }
        listed.add(start(services, "services").thenCompose(v -> serviceEvents));
        listed.add(start(slices, "endpointslices").thenCompose(v -> sliceEvents));
        listed.add(start(nodes, "node " + node).thenCompose(v -> nodeEvents).thenRun(() -> {
            if (store.nodeMissing()) {
                LOG.warn("no Node named '{}' in the cluster: NodePorts are served on no address of it and /healthz answers"
                        + " 503 until it appears (is --hostname-override / hostnameOverride this node's name?)", node);
            }
        }));
        return CompletableFuture.allOf(listed.toArray(CompletableFuture[]::new)).thenRun(() -> {
            LOG.info("informers synced from {}: {} services, {} endpoint slices", server(), services.getStore().listKeys().size(),
                    slices.getStore().listKeys().size());
            watchWatches();
        });
    }

    /**
     * Says when a watch is lost and when it is back. The client re-establishes a lost watch by
     * itself, with backoff, and says nothing above debug level; an operator wants to know that the
     * node is not hearing from its API server.
     */
    private void watchWatches() {
        Thread t = new Thread(() -> {
            Map<String, SharedIndexInformer<?>> watched = Map.of("services", services, "endpointslices", slices, "nodes", nodes);
            Map<String, Boolean> was = new HashMap<>();
            while (!closed) {
                watched.forEach((what, informer) -> {
                    boolean watching = informer.isWatching();
                    Boolean before = was.put(what, watching);
                    if (before != null && before && !watching) {
                        LOG.warn("watching {} from API server {} stopped; reconnecting (what is known stays programmed)", what,
                                server());
                    } else if (before != null && !before && watching) {
                        LOG.info("watching {} from API server {} again", what, server());
                    }
                });
                try {
                    Thread.sleep(WATCH_CHECK_MILLIS);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "watch-monitor");
        t.setDaemon(true);
        t.start();
    }

    /**
     * ServiceCIDRs are GA since Kubernetes 1.33 (system:node-proxier may list and watch them): an
     * API server that does not serve them, or does not let us read them, is said once and the
     * proxy goes on without them, as with no ServiceCIDR at all. Completes with whether they are
     * served (listed, and watched from then on).
     */
    private CompletableFuture<Boolean> startServiceCidrs() {
        serviceCidrs.exceptionHandler((started, t) -> {
            if (closed) {
                return false;
            }
            if (t instanceof KubernetesClientException k && (k.getCode() == 404 || k.getCode() == 403)) {
                LOG.warn("servicecidrs (networking.k8s.io/v1) from API server {}: {}; unallocated service IPs are not dropped"
                        + " (--service-cidr gives the service network)", server(), reason(t));
                return false;
            }
            LOG.warn("{} servicecidrs from API server {} failed: {}; retrying", started ? "watching" : "listing", server(),
                    reason(t));
            return true;
        });
        return serviceCidrs.start().toCompletableFuture().thenApply(v -> true).exceptionally(e -> false);
    }

    private CompletableFuture<Void> start(SharedIndexInformer<?> informer, String what) {
        informer.exceptionHandler((started, t) -> {
            if (closed) {
                return false;
            }
            LOG.warn("{} {} from API server {} failed: {}; retrying", started ? "watching" : "listing", what, server(), reason(t));
            return true;
        });
        return informer.start().toCompletableFuture();
    }

    /** The innermost cause's message, on one line: what a person needs to know about a failed request. */
    static String reason(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            if (root instanceof KubernetesClientException k && k.getCode() > 0) {
                break; // the API server answered: its status says why
            }
            root = root.getCause();
        }
        String m = root instanceof KubernetesClientException k && k.getStatus() != null && k.getStatus().getMessage() != null
                ? k.getCode() + " " + k.getStatus().getMessage() : root.getMessage();
        if (m == null || m.isBlank()) {
            m = root.getClass().getSimpleName();
        } else if (root instanceof UnknownHostException) {
            m = "unknown host " + m;
        }
        return m.lines().findFirst().orElse(m);
    }

    /**
     * Where this proxy's events go: the API server, reported by nftproxy on this node. Sent
     * before the client closes.
     */
    public EventRecorder events() {
        return events;
    }

    /**
     * The event kube-proxy records when it starts (its "birth cry"): on this node's Node object,
     * type Normal, reason Starting, action StartKubeProxy.
     */
    public void announceStart() {
        events.record(EventRecorder.Regarding.node(store.node().name()), EventRecorder.Type.NORMAL, "Starting",
                "StartKubeProxy", "Starting nftproxy (nf_tables over netlink)");
    }

    /**
     * An informer whose cache keeps each object's key and resource version only ({@link
     * KeyVersionStore}: the proxy keeps its own model) and no index (nothing reads one).
     */
    private <T extends HasMetadata> SharedIndexInformer<T> keysOnly(Informable<T> what, Supplier<T> blank) {
        return what.runnableInformer(resyncMillis).itemStore(new KeyVersionStore<>(blank)).removeNamespaceIndex();
    }

    /**
     * Hands the informer's objects to the store; completes when its first listing has reached the
     * store. The client hands events to handlers on a thread of its own, after its own cache has
     * the objects, so "listed" is not yet "delivered", and a first sync before it would program a
     * part of the cluster (as client-go's handler registrations' HasSynced guards kube-proxy
     * against). The client tells each handler when a listing is over ({@code onList}), on that
     * thread and after the listing's events. (Counting events against the cache's size, as this
     * did before, could complete early when a later page failed and the listing started again:
     * the second attempt's updates counted on top of the first's adds.)
     */
    private <T extends HasMetadata> CompletableFuture<Void> deliverTo(SharedIndexInformer<T> informer, String kind) {
        CompletableFuture<Void> listed = new CompletableFuture<>();
        informer.addEventHandler(handler(kind, listed));
        return listed;
    }

    private <T extends HasMetadata> ResourceEventHandler<T> handler(String kind, CompletableFuture<Void> listed) {
        Consumer<T> upsert = obj -> {
            KubeObject o = KubeModel.object(obj, store.selection(), problem -> LOG.error("{} {}: {}", kind, name(obj), problem));
            if (o != null) {
                store.put(o);
            }
        };
        return new ResourceEventHandler<>() {
            @Override
            public void onList(String resourceVersion, boolean remainedEmpty) {
                listed.complete(null);
            }

            @Override
            public void onAdd(T obj) {
                upsert.accept(obj);
            }

            @Override
            public void onUpdate(T oldObj, T newObj) {
                if (oldObj == newObj) {
                    // A resync (every configSyncPeriod) hands each object over again as an update
                    // of itself, and from the informer's cache that object is rebuilt from its key and
                    // resource version alone: no spec, no labels. Read as news it would take every
                    // service's ports away until its next real change. Nothing changed, as
                    // kube-proxy's handlers find on a resync.
                    resyncs.incrementAndGet();
                    return;
                }
                upsert.accept(newObj);
            }

            @Override
            public void onDelete(T obj, boolean deletedFinalStateUnknown) {
                store.remove(key(kind, obj));
            }
        };
    }

    /** Objects a resync handed over again (and that were rightly left as they were). */
    long resyncsSeen() {
        return resyncs.get();
    }

    private static String name(HasMetadata o) {
        return o.getMetadata() == null ? "?" : ObjectKey.namespace(o.getMetadata().getNamespace()) + "/" + o.getMetadata().getName();
    }

    static ObjectKey key(String kind, HasMetadata o) {
        return ObjectKey.of(ObjectKey.Kind.of(kind), o.getMetadata().getNamespace(), o.getMetadata().getName());
    }

    @Override
    public void close() {
        closed = true;
        for (SharedIndexInformer<?> i : new SharedIndexInformer<?>[] {services, slices, nodes, serviceCidrs}) {
            if (i != null) {
                i.close();
            }
        }
        events.close();
        if (ownsClient) {
            client.close();
        }
    }
}
