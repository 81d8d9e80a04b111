package io.nftproxy.proxy.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDR;
import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDRBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;

import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.source.KubernetesSource;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.proxy.sync.SyncLoop;
import io.nftproxy.proxy.sync.Syncer;
import io.nftproxy.sandbox.Sandbox.Outcome.Result;

/**
 * The service network from the cluster's ServiceCIDR objects (networking.k8s.io/v1), as kube-proxy's
 * nftables mode takes it, followed live: traffic to an unallocated address of a ServiceCIDR is
 * dropped, with real packets from a pod; a second ServiceCIDR widens it, deleting one narrows it.
 * The node routes 10.98.0.0/16 out to the external network, where 10.98.5.5 is a host without a
 * listener: without the drop a connection there is refused by that host; with it, it times out.
 */
@EnableKubernetesMockClient(crud = true)
class ServiceCidrKernelTest {
    KubernetesClient client;

    static ServiceCIDR serviceCidr(String name, String... cidrs) {
        return new ServiceCIDRBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec().withCidrs(cidrs).endSpec()
                .build();
    }

    @Test
    void unallocatedAddressesOfTheClustersServiceCidrsAreDroppedAsTheyChange() throws Exception {
        ProxyConfig cfg = ProxyConfig.builder("node-a").clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16")))
                .minSyncPeriod(Duration.ofMillis(20)).syncPeriod(Duration.ofMinutes(5)).build();
        ObjectStore store = new ObjectStore("node-a");
        List<String> failures = new CopyOnWriteArrayList<>();
        SyncListener recordFailures = new SyncListener() {
            @Override
            public void failed(boolean full, Exception error) {
                failures.add(error.getMessage());
            }
        };
        try (Topology topo = new Topology(); NftClient nft = NftClient.open(topo.node.ns());
             KubernetesSource source = new KubernetesSource(client, store);
             SyncLoop loop = new SyncLoop(store, new Syncer(nft, new NftRenderer(cfg), "nftproxy"), Duration.ofMillis(20),
                     Duration.ofMinutes(5), recordFailures)) {
            topo.ext.exec("ip", "addr", "add", "10.98.5.5/32", "dev", "lo");
            topo.node.exec("sh", "-c", "ip route add 10.98.0.0/16 dev $(ip -o route get 10.96.0.1 | awk '{print $3}')");
            source.start();
            loop.start();
            Topology.eventually(Duration.ofSeconds(20), () -> topo.node.exec("nft", "list", "tables").contains("nftproxy"),
                    "the first sync");
            assertEquals(Result.REFUSED, topo.tcp(topo.node, null, "10.98.5.5", 80).result(),
                    "no ServiceCIDR yet: an address like any other");

            client.network().v1().serviceCIDRs().resource(serviceCidr("kubernetes", "10.96.0.0/16")).create();
            client.network().v1().serviceCIDRs().resource(serviceCidr("extra", "10.98.0.0/16", "fd00:98::/112")).create();
            Topology.eventually(Duration.ofSeconds(20), () -> topo.node.exec("nft", "list", "set", "ip", "nftproxy",
                    "service-cidrs").contains("10.98.0.0/16"), "the new range reaches the kernel");
            assertEquals(Result.TIMEOUT, topo.tcp(topo.node, null, "10.98.5.5", 80).result(),
                    "an unallocated address of the new ServiceCIDR is dropped");
            String v6 = topo.node.exec("nft", "list", "set", "ip6", "nftproxy", "service-cidrs");
            assertEquals(true, v6.contains("fd00:98::/112"), v6);

            client.network().v1().serviceCIDRs().withName("extra").delete();
            Topology.eventually(Duration.ofSeconds(20), () -> !topo.node.exec("nft", "list", "set", "ip", "nftproxy",
                    "service-cidrs").contains("10.98.0.0/16"), "the deleted range leaves the kernel");
            assertEquals(Result.REFUSED, topo.tcp(topo.node, null, "10.98.5.5", 80).result(),
                    "no longer a service address: not dropped");
            String v4 = topo.node.exec("nft", "list", "set", "ip", "nftproxy", "service-cidrs");
            assertEquals(true, v4.contains("10.96.0.0/16"), v4);
            assertEquals(List.of(), failures, "every change of the service network went in at the first attempt");
        }
    }
}
