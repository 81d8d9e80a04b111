package io.nftproxy.proxy.source;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

/**
 * A live cluster as the source: shared informers on Services, EndpointSlices and this node's Node
 * object, which list, watch, re-list after a lost watch and resync periodically.
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
        Config cfg = kubeconfig == null ? new io.fabric8.kubernetes.client.ConfigBuilder().build()
                : Config.fromKubeconfig(Files.readString(kubeconfig));
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
    public void start(boolean once) throws Exception {
        services = client.services().inAnyNamespace().runnableInformer(RESYNC_MILLIS);
        services.addEventHandler(handler(store::upsertService, store::deleteService));
        slices = client.discovery().v1().endpointSlices().inAnyNamespace().runnableInformer(RESYNC_MILLIS);
        slices.addEventHandler(handler(store::upsertSlice, store::deleteSlice));
        String node = store.node().name();
        nodes = client.nodes().withField("metadata.name", node).runnableInformer(RESYNC_MILLIS);
        nodes.addEventHandler(handler(store::upsertNode, store::deleteNode));
        for (SharedIndexInformer<?> i : new SharedIndexInformer<?>[] {services, slices, nodes}) {
            i.start().toCompletableFuture().get(60, TimeUnit.SECONDS);
        }
        LOG.info("informers synced: {} services, {} endpoint slices", services.getStore().list().size(),
                slices.getStore().list().size());
    }

    private static <T> ResourceEventHandler<T> handler(java.util.function.Consumer<T> upsert, java.util.function.Consumer<T> delete) {
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
                delete.accept(obj);
            }
        };
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
