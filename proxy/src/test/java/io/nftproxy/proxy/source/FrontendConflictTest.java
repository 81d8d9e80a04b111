package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.proxy.manifest.Yaml;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.PartialSyncPropertyTestAccess;
import io.nftproxy.proxy.sync.Syncer;

/** Two services on one address and port: one owner, the conflict reported, the other taking over when the owner goes. */
class FrontendConflictTest {
    static void put(ObjectStore store, String yaml) {
        Yaml.documents(yaml).forEach(d -> KubeModel.objects(d, p -> { }).forEach(store::put));
    }

    static String service(String name, String ip, String extra, String endpoint) {
        return "kind: Service\nmetadata: {name: " + name + ", namespace: ns}\nspec: {clusterIP: " + ip
                + ", ports: [{name: http, port: 80}]" + extra + "}\n---\n"
                + "kind: EndpointSlice\nmetadata: {name: " + name + "-1, namespace: ns, labels: {kubernetes.io/service-name: " + name
                + "}}\naddressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints: [{addresses: [" + endpoint + "]}]\n---\n";
    }

    static ServicePortName id(String name) {
        return new ServicePortName("ns", name, "http", Protocol.TCP);
    }

    @Test
    void oneOwnerPerFrontendAndTheOtherTakesOverWhenItGoes() throws Exception {
        ObjectStore store = new ObjectStore("node-a");
        FakeNfTables fake = new FakeNfTables();
        Syncer syncer = new Syncer(fake, new NftRenderer(PartialSyncPropertyTestAccess.CFG), "nftproxy");
        put(store, service("a", "10.96.0.10", ", externalIPs: [203.0.113.5]", "10.244.0.1")
                + service("b", "10.96.0.10", ", externalIPs: [203.0.113.5]", "10.244.0.2")
                + service("c", "10.96.0.12", ", externalIPs: [203.0.113.5]", "10.244.0.3"));
        ObjectStore.Snapshot s1 = store.snapshot();
        assertEquals(List.of("10.96.0.10"), ips(s1, "a"), "the first by name owns the clusterIP");
        assertEquals(List.of(), ips(s1, "b"));
        assertEquals(List.of("10.96.0.12"), ips(s1, "c"), "an address nobody else claims stays");
        assertEquals(List.of(), s1.state().services().get(id("c")).externalIPs(), "the shared external IP is a's");
        assertEquals(2, store.conflicts());
        assertTrue(s1.errors().get(new Problem(Problem.Kind.CONFLICT, "10.96.0.10:80/TCP")).contains("ns/a:http/tcp serves it, not ns/b:http/tcp"),
                s1.errors().toString());
        syncer.sync(s1.state(), null);
        String t1 = fake.readTable(Family.IP, "nftproxy").toString();
        assertTrue(t1.contains("10.244.0.1 . 8080") && !t1.contains("10.244.0.2 . 8080"),
                "the owner's endpoints only, never a mix: " + t1);

        store.remove(new ObjectKey(ObjectKey.Kind.SERVICE, "ns", "a"));
        ObjectStore.Snapshot s2 = store.snapshot();
        assertEquals(List.of("10.96.0.10"), ips(s2, "b"), "b takes over");
        assertEquals(Set.of(id("a"), id("b")), s2.changed(), "the gone owner and the new one are re-synced, c is as it was");
        assertEquals(1, store.conflicts(), "b and c still share the external IP");
        assertFalse(s2.errors().containsKey(new Problem(Problem.Kind.CONFLICT, "10.96.0.10:80/TCP")));
        syncer.sync(s2.state(), s2.changed());
        String t2 = fake.readTable(Family.IP, "nftproxy").toString();
        assertTrue(t2.contains("10.244.0.2 . 8080") && !t2.contains("10.244.0.1 . 8080"), "a partial sync moved it: " + t2);
    }

    static List<String> ips(ObjectStore.Snapshot s, String name) {
        return s.state().services().get(id(name)).clusterIPs().stream().map(a -> a.getHostAddress()).toList();
    }
}
