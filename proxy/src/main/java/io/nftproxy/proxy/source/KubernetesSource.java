package io.nftproxy.proxy.source;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.MicroTime;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.api.model.events.v1.EventBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.ReducedStateItemStore;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A live cluster as the source: shared informers on Services, EndpointSlices and this node's Node
 * object, which list, watch, re-list after a lost watch and resync periodically. Each object is
 * converted to the compact model as it arrives; the informers' own caches keep only each object's
 * key and resource version (fabric8's reduced-state store), not the object.
 */
public final class KubernetesSource implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KubernetesSource.class);
    private static final long RESYNC_MILLIS = 15 * 60 * 1000L;

    private final KubernetesClient client;
    private final boolean ownsClient;
    private final ObjectStore store;
    private SharedIndexInformer<Service> services;
    private SharedIndexInformer<EndpointSlice> slices;
    private SharedIndexInformer<Node> nodes;

    /** From a kubeconfig file, or in-cluster configuration when {@code kubeconfig} is null. */
    public KubernetesSource(Path kubeconfig, ObjectStore store) throws IOException {
        Config cfg = kubeconfig == null ? new ConfigBuilder().build() : Config.fromKubeconfig(Files.readString(kubeconfig));
        this.client = new KubernetesClientBuilder().withConfig(cfg).build();
        this.ownsClient = true;
        this.store = store;
    }

    /** Over a client the caller owns (tests use the mock server's). */
    public KubernetesSource(KubernetesClient client, ObjectStore store) {
        this.client = client;
        this.ownsClient = false;
        this.store = store;
    }

    /** Starts the informers and waits until each has listed once. */
    public void start() throws Exception {
        KubernetesSerialization json = client.getKubernetesSerialization();
        // The API server applies the selection; KubeModel applies it again on arrival, so an
        // object whose labels move it out of the selection goes whichever way the news comes.
        String selector = store.selection().labelSelector();
        services = client.services().inAnyNamespace().withLabelSelector(selector).runnableInformer(RESYNC_MILLIS)
                .itemStore(reduced(Service.class, json));
        services.addEventHandler(handler(json, "Service"));
        slices = client.discovery().v1().endpointSlices().inAnyNamespace().withLabelSelector(selector).runnableInformer(RESYNC_MILLIS)
                .itemStore(reduced(EndpointSlice.class, json));
        slices.addEventHandler(handler(json, "EndpointSlice"));
        String node = store.node().name();
        nodes = client.nodes().withField("metadata.name", node).runnableInformer(RESYNC_MILLIS);
        nodes.addEventHandler(handler(json, "Node"));
        for (SharedIndexInformer<?> i : new SharedIndexInformer<?>[] {services, slices, nodes}) {
            i.start().toCompletableFuture().get(60, TimeUnit.SECONDS);
        }
        LOG.info("informers synced: {} services, {} endpoint slices", services.getStore().list().size(),
                slices.getStore().list().size());
    }

    /**
     * The event kube-proxy records when it starts: on this node's Node object (events.k8s.io/v1,
     * in namespace default as for every cluster-scoped object), type Normal, reason Starting,
     * action StartKubeProxy, reported by nftproxy on this node. A failure is logged, not fatal.
     */
    public void announceStart() {
        String node = store.node().name();
        try {
            String now = Instant.now().truncatedTo(ChronoUnit.MICROS).toString();
            Event e = new EventBuilder()
                    .withNewMetadata().withGenerateName(node + ".").withNamespace("default").endMetadata()
                    .withNewRegarding().withKind("Node").withApiVersion("v1").withName(node).withUid(node).endRegarding()
                    .withType("Normal").withReason("Starting").withAction("StartKubeProxy")
                    .withNote("Starting nftproxy (nf_tables over netlink)")
                    .withReportingController("nftproxy").withReportingInstance("nftproxy-" + node)
                    .withEventTime(new MicroTime(now)).build();
            client.events().v1().events().inNamespace("default").resource(e).create();
        } catch (RuntimeException ex) {
            LOG.warn("could not record the Starting event on Node {}: {}", node, ex.getMessage());
        }
    }

    /** An informer cache that keeps each object's key and resource version only: we keep the model. */
    private static <T extends HasMetadata> ReducedStateItemStore<T> reduced(Class<T> type, KubernetesSerialization json) {
        return new ReducedStateItemStore<>(ReducedStateItemStore.NAME_KEY_STATE, type, json);
    }

    private <T extends HasMetadata> ResourceEventHandler<T> handler(KubernetesSerialization json, String kind) {
        Consumer<T> upsert = obj -> {
            @SuppressWarnings("unchecked")
            Map<String, Object> tree = json.convertValue(obj, Map.class);
            tree.putIfAbsent("kind", kind); // list items may come without their kind
            for (KubeObject o : KubeModel.objects(tree, store.selection(), problem -> LOG.error("{} {}: {}", kind, name(obj), problem))) {
                store.put(o);
            }
        };
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T obj) {
                upsert.accept(obj);
            }

            @Override
            public void onUpdate(T oldObj, T newObj) {
                upsert.accept(newObj);
            }

            @Override
            public void onDelete(T obj, boolean deletedFinalStateUnknown) {
                store.remove(key(kind, obj));
            }
        };
    }

    private static String name(HasMetadata o) {
        return o.getMetadata() == null ? "?" : ObjectKey.namespace(o.getMetadata().getNamespace()) + "/" + o.getMetadata().getName();
    }

    static ObjectKey key(String kind, HasMetadata o) {
        ObjectKey.Kind k = switch (kind) {
            case "Service" -> ObjectKey.Kind.SERVICE;
            case "EndpointSlice" -> ObjectKey.Kind.ENDPOINT_SLICE;
            default -> ObjectKey.Kind.NODE;
        };
        String ns = k == ObjectKey.Kind.NODE ? "" : ObjectKey.namespace(o.getMetadata().getNamespace());
        return new ObjectKey(k, ns, o.getMetadata().getName());
    }

    @Override
    public void close() {
        for (SharedIndexInformer<?> i : new SharedIndexInformer<?>[] {services, slices, nodes}) {
            if (i != null) {
                i.close();
            }
        }
        if (ownsClient) {
            client.close();
        }
    }
}
