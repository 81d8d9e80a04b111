package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * The API server goes away and comes back (same address, same objects): what the proxy knew stays
 * in the meantime, and a change made once it is back arrives after the informers reconnect.
 */
class ApiOutageTest {
    static ServicePortName id(String name) {
        return new ServicePortName("shop", name, "http", Protocol.TCP);
    }

    static void eventually(java.util.concurrent.Callable<Boolean> c, String what) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (System.nanoTime() < deadline) {
            if (c.call()) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("not within 90 s: " + what);
    }

    @Test
    void whatWasKnownStaysAndChangesArriveAfterReconnecting() throws Exception {
        KubernetesCrudDispatcher store = new KubernetesCrudDispatcher(); // the API's objects, kept across restarts
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
            Thread.sleep(2000); // an outage, with the informers failing to watch and list meanwhile
            assertTrue(objects.snapshot().state().services().containsKey(id("cart")), "what was known stays");

            // The API server is back at the same address; a change made now must reach us.
            KubernetesMockServer second = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), store, false);
            second.init(InetAddress.getLoopbackAddress(), port);
            try (KubernetesClient admin = second.createClient()) {
                admin.services().inNamespace("shop").resource(KubernetesSourceKernelTest.service("shipping", "10.96.7.2")).create();
                eventually(() -> objects.snapshot().state().services().containsKey(id("shipping")), "the change arrives");
                assertEquals(true, objects.snapshot().state().services().containsKey(id("cart")));
            } finally {
                second.destroy();
            }
        } finally {
            client.close();
        }
    }
}
