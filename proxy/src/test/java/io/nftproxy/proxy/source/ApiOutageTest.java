package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;

import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.sandbox.PagingApiDispatcher;
import io.nftproxy.sandbox.Sandbox;

/**
 * The API server goes away and comes back (same address, same objects): what the proxy knew stays
 * in the meantime (the rules keep forwarding, and no change is pending, so health stays as it
 * was), what changed in the cluster meanwhile arrives once the informers reconnect, and so do
 * later changes.
 */
class ApiOutageTest {
    static ServicePortName id(String name) {
        return new ServicePortName("shop", name, "http", Protocol.TCP);
    }

    static void eventually(Callable<Boolean> c, String what) throws Exception {
        Sandbox.eventually(Duration.ofSeconds(90), c, what); // reconnecting informers back off for seconds
    }

    @Test
    void whatWasKnownStaysAndChangesMadeMeanwhileArriveAfterReconnecting() throws Exception {
        PagingApiDispatcher store = new PagingApiDispatcher(); // the API's objects, kept across restarts
        KubernetesMockServer first = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), store, false);
        first.init(InetAddress.getLoopbackAddress(), 0);
        int port = first.getPort();
        KubernetesClient client = first.createClient();
        client.services().inNamespace("shop").resource(KubernetesSourceKernelTest.service("cart", "10.96.7.1")).create();
        ObjectStore objects = new ObjectStore("node-a");
        try (KubernetesSource source = new KubernetesSource(client, objects)) {
            source.start();
            assertTrue(objects.snapshot().state().services().containsKey(id("cart")));

            first.destroy();
            // While it is away, the cluster changes: another API server on the same objects (the
            // store is shared) takes a new service and a change to the one we know. (A deletion:
            // the next test.)
            KubernetesMockServer meanwhile = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), store,
                    false);
            meanwhile.init(InetAddress.getLoopbackAddress(), 0);
            try (KubernetesClient other = meanwhile.createClient()) {
                other.services().inNamespace("shop").resource(KubernetesSourceKernelTest.service("checkout", "10.96.7.3")).create();
                other.services().inNamespace("shop").withName("cart")
                        .edit(svc -> new ServiceBuilder(svc).editSpec().editFirstPort().withPort(8080).endPort().endSpec().build());
            } finally {
                meanwhile.destroy();
            }
            Thread.sleep(2000); // the outage goes on, with the informers failing to watch and list meanwhile
            assertTrue(objects.snapshot().state().services().containsKey(id("cart")), "what was known stays");
            objects.snapshot();
            assertEquals(0, objects.pending()[0] + objects.pending()[1], "nothing arrives while the API is away: no change waits, health stays");

            // The API server is back at the same address: what changed meanwhile arrives, and so does a change made now.
            KubernetesMockServer second = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), store, false);
            second.init(InetAddress.getLoopbackAddress(), port);
            try (KubernetesClient admin = second.createClient()) {
                eventually(() -> objects.snapshot().state().services().containsKey(id("checkout")), "the service added meanwhile arrives");
                eventually(() -> objects.snapshot().state().services().get(id("cart")).port() == 8080,
                        "the change made meanwhile arrives");
                admin.services().inNamespace("shop").resource(KubernetesSourceKernelTest.service("shipping", "10.96.7.2")).create();
                eventually(() -> objects.snapshot().state().services().containsKey(id("shipping")), "a change made now arrives");
            } finally {
                second.destroy();
            }
        } finally {
            client.close();
        }
    }

    /**
     * A service deleted while the API server was away goes once it is back: the informer whose
     * watch failed lists again and finds it gone (the informers' cache hands it over to be
     * deleted as its key and version alone).
     */
    @Test
    void aServiceDeletedMeanwhileGoesAfterReconnecting() throws Exception {
        PagingApiDispatcher store = new PagingApiDispatcher();
        KubernetesMockServer first = ApiListingTest.serve(store);
        int port = first.getPort();
        KubernetesClient client = first.createClient();
        client.services().inNamespace("shop").resource(KubernetesSourceKernelTest.service("cart", "10.96.7.1")).create();
        client.services().inNamespace("shop").resource(KubernetesSourceKernelTest.service("checkout", "10.96.7.3")).create();
        ObjectStore objects = new ObjectStore("node-a");
        try (KubernetesSource source = new KubernetesSource(client, objects)) {
            source.start();
            assertTrue(objects.snapshot().state().services().containsKey(id("cart")));
            first.destroy();
            KubernetesMockServer meanwhile = ApiListingTest.serve(store);
            try (KubernetesClient other = meanwhile.createClient()) {
                other.services().inNamespace("shop").withName("cart").delete();
            } finally {
                meanwhile.destroy();
            }
            assertTrue(objects.snapshot().state().services().containsKey(id("cart")), "what was known stays while away");
            KubernetesMockServer second = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), store, false);
            second.init(InetAddress.getLoopbackAddress(), port);
            try {
                eventually(() -> !objects.snapshot().state().services().containsKey(id("cart")), "the service deleted meanwhile goes");
                assertTrue(objects.snapshot().state().services().containsKey(id("checkout")), "the other stays");
            } finally {
                second.destroy();
            }
        } finally {
            client.close();
        }
    }
}
