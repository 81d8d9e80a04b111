package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;

class KeyVersionStoreTest {
    private static Service service(String ns, String name, String version) {
        return new ServiceBuilder().withNewMetadata().withNamespace(ns).withName(name).withResourceVersion(version)
                .addToLabels("app", "shop").endMetadata().withNewSpec().withClusterIP("10.96.0.1").endSpec().build();
    }

    /** What the informer reads back of an object: its namespace, name and version, nothing else. */
    @Test
    void anObjectComesBackAsItsKeyAndVersion() {
        KeyVersionStore<Service> store = new KeyVersionStore<>(Service::new);
        Service cart = service("shop", "cart", "41");
        String key = store.getKey(cart);
        assertEquals("shop/cart", key);
        assertNull(store.put(key, cart), "nothing held before");
        Service old = store.put(key, service("shop", "cart", "42"));
        assertEquals("shop", old.getMetadata().getNamespace());
        assertEquals("cart", old.getMetadata().getName());
        assertEquals("41", old.getMetadata().getResourceVersion(), "the version it replaced");
        assertNull(old.getSpec(), "no more than the key and the version");
        assertEquals("42", store.get(key).getMetadata().getResourceVersion());
        assertEquals(List.of("shop/cart"), store.keySet().toList());
        assertEquals(1, store.size());
        assertEquals("42", store.remove(key).getMetadata().getResourceVersion());
        assertNull(store.get(key));
        assertNull(store.remove(key));
        assertEquals(0, store.values().count());
    }

    @Test
    void aClusterScopedObjectOrOneWithoutAVersion() {
        KeyVersionStore<Node> store = new KeyVersionStore<>(Node::new);
        Node node = new NodeBuilder().withNewMetadata().withName("node-a").endMetadata().build();
        String key = store.getKey(node);
        assertEquals("node-a", key);
        store.put(key, node);
        Node back = store.values().findFirst().orElseThrow();
        assertNull(back.getMetadata().getNamespace());
        assertEquals("node-a", back.getMetadata().getName());
        assertNull(back.getMetadata().getResourceVersion());
    }
}
