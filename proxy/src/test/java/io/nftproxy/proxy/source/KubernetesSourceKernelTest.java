package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.proxy.sync.SyncLoop;
import io.nftproxy.proxy.sync.Syncer;
import io.nftproxy.testkit.TestNetns;

/** The informer path: objects created, changed and deleted through the API server reach the kernel. */
@EnableKubernetesMockClient(crud = true)
class KubernetesSourceKernelTest {
    KubernetesClient client;

    static Service service(String name, String ip) {
        return new ServiceBuilder().withNewMetadata().withName(name).withNamespace("shop").endMetadata()
                .withNewSpec().withClusterIP(ip).withClusterIPs(ip).addNewPort().withName("http").withPort(80)
                .withProtocol("TCP").endPort().endSpec().build();
    }

    static EndpointSlice slice(String service, String... ips) {
        EndpointSliceBuilder b = new EndpointSliceBuilder().withNewMetadata().withName(service + "-x").withNamespace("shop")
                .withLabels(Map.of("kubernetes.io/service-name", service)).endMetadata().withAddressType("IPv4")
                .addNewPort().withName("http").withPort(8080).withProtocol("TCP").endPort();
        for (String ip : ips) {
            b.addNewEndpoint().withAddresses(ip).withNodeName("node-b").withNewConditions().withReady(true).endConditions().endEndpoint();
        }
        return b.build();
    }

    static void eventually(Callable<Boolean> check, String what) throws Exception {
        Sandbox.eventually(Duration.ofSeconds(20), check, what);
    }

    @Test
    void apiChangesReachTheKernel() throws Exception {
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a").endMetadata().withNewStatus()
                .addNewAddress().withType("InternalIP").withAddress("192.168.50.2").endAddress().endStatus().build()).create();
        client.services().inNamespace("shop").resource(service("cart", "10.96.7.1")).create();
        client.discovery().v1().endpointSlices().inNamespace("shop").resource(slice("cart", "10.244.7.1")).create();

        ProxyConfig cfg = ProxyConfig.builder("node-a").clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16")))
                .minSyncPeriod(Duration.ofMillis(20)).syncPeriod(Duration.ofMinutes(5)).build();
        ObjectStore store = new ObjectStore("node-a");
        try (TestNetns ns = TestNetns.create("nftp-k8s"); NftClient nft = NftClient.open(ns.ns());
             NftClient reader = NftClient.open(ns.ns());
             KubernetesSource source = new KubernetesSource(client, store);
             SyncLoop loop = new SyncLoop(store, new Syncer(nft, new NftRenderer(cfg), "nftproxy"), Duration.ofMillis(20),
                     Duration.ofMinutes(5), new SyncListener() { })) {
            source.start();
            loop.start();
            // A client of its own: the sync loop's client is used by the loop's thread only.
            Callable<String> table = () -> reader.hasTable(Family.IP, "nftproxy")
                    ? reader.readTable(Family.IP, "nftproxy").toString() : "";
            eventually(() -> table.call().contains("10.96.7.1 . tcp . 80 . 0x00000000 comment \"shop/cart:http\" : 10.244.7.1 . 8080"), "the service and its endpoint");
            eventually(() -> table.call().contains("elements = { 192.168.50.2 }"), "the node's address serves NodePorts");

            client.discovery().v1().endpointSlices().inNamespace("shop").resource(slice("cart", "10.244.7.1", "10.244.7.2")).update();
            eventually(() -> table.call().contains(" : 10.244.7.2 . 8080")
                    && table.call().matches("(?s).*set ip-count-bit-0 \\{[^}]*10\\.96\\.7\\.1 \\. tcp \\. 80 comment \"shop/cart:http\".*"),
                    "an endpoint added through the API (two endpoints: 2 - 1 has bit 0)");

            client.services().inNamespace("shop").resource(service("shipping", "10.96.7.2")).create();
            eventually(() -> table.call().matches("(?s).*set no-endpoint-reject \\{[^}]*10\\.96\\.7\\.2 \\. tcp \\. 80.*"),
                    "a new service without endpoints rejects");

            client.services().inNamespace("shop").withName("cart").delete();
            eventually(() -> !table.call().contains("10.96.7.1 . tcp"), "a deleted service is gone");
            String after = table.call();
            assertTrue(after.contains("10.96.7.2 . tcp . 80"), after);
            assertFalse(after.contains("10.244.7.1 . 8080") || after.contains("10.244.7.2 . 8080"),
                    "its endpoints went with it: " + after);
        }
    }

    /** kube-proxy's selection on the informer path: server-side, and again on arrival. No kernel involved. */
    @Test
    void servicesOfAnotherProxyAreNotOursAndRelabellingMovesThem() throws Exception {
        Service other = service("other", "10.96.8.1");
        other.getMetadata().setLabels(Map.of("service.kubernetes.io/service-proxy-name", "other"));
        client.services().inNamespace("shop").resource(other).create();
        client.services().inNamespace("shop").resource(service("mine", "10.96.8.2")).create();
        ServicePortName otherId = new ServicePortName("shop", "other", "http", Protocol.TCP);
        ServicePortName mineId = new ServicePortName("shop", "mine", "http", Protocol.TCP);

        ObjectStore store = new ObjectStore("node-a");
        ObjectStore beside = new ObjectStore("node-a", new ProxySelection("other"));
        try (KubernetesSource a = new KubernetesSource(client, store); KubernetesSource b = new KubernetesSource(client, beside)) {
            a.start();
            b.start();
            assertEquals(Set.of(mineId), store.snapshot().state().services().keySet());
            assertEquals(Set.of(otherId), beside.snapshot().state().services().keySet());

            other.getMetadata().setLabels(Map.of());
            client.services().inNamespace("shop").resource(other).update();
            eventually(() -> store.snapshot().state().services().containsKey(otherId), "the unlabelled service becomes ours");
            eventually(() -> !beside.snapshot().state().services().containsKey(otherId), "and leaves the other proxy");

            Service mine = client.services().inNamespace("shop").withName("mine").get();
            mine.getMetadata().setLabels(Map.of("service.kubernetes.io/service-proxy-name", "other"));
            client.services().inNamespace("shop").resource(mine).update();
            eventually(() -> !store.snapshot().state().services().containsKey(mineId), "a service labelled away leaves");
            eventually(() -> beside.snapshot().state().services().containsKey(mineId), "and the other proxy takes it");
        }
    }

    @Test
    void startingIsRecordedOnTheNodeAsKubeProxyRecordsIt() throws Exception {
        ObjectStore store = new ObjectStore("node-a");
        try (KubernetesSource source = new KubernetesSource(client, store)) {
            source.announceStart();
            // Sent on a thread of its own: waited for here, not by close(), which gives a send 3 s
            // and a loaded machine (a coverage run beside CI) more than that.
            eventually(() -> !client.events().v1().events().inNamespace("default").list().getItems().isEmpty(),
                    "the event reaches the API server");
        }
        List<Event> events = client.events().v1().events().inNamespace("default").list()
                .getItems();
        assertEquals(1, events.size());
        Event e = events.get(0);
        assertEquals(List.of("Node", "node-a", "Normal", "Starting", "StartKubeProxy", "nftproxy"), List.of(e.getRegarding().getKind(),
                e.getRegarding().getName(), e.getType(), e.getReason(), e.getAction(), e.getReportingController()));
        assertTrue(e.getEventTime() != null && e.getEventTime().getTime().endsWith("Z"), "eventTime is set");
    }
}
