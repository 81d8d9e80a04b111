package io.nftproxy.proxy.apiserver;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.KubeProxyConfigReaderTestAccess;
import io.nftproxy.sandbox.PagingApiDispatcher;
import io.nftproxy.testkit.TestNetns;

/**
 * A control plane and one node, as kubeadm sets them up for kube-proxy: fabric8's mock API server
 * behind TLS on the control plane's own address (its own network namespace, linked to the node's),
 * the Node object, and kubeadm's kube-proxy ConfigMap files and the service account's files laid
 * out under {@link #root} at kubeadm's paths (var/lib/kube-proxy, run/secrets/...).
 */
final class ControlPlane implements AutoCloseable {
    static final String ADDRESS = "10.231.0.1";
    static final String NODE_ADDRESS = "10.231.0.2";
    static final String TOKEN = "kube-proxy-sa-token";

    final KubernetesMockServer api;
    final KubernetesClient admin;
    final TestNetns cp;
    final TestNetns node;
    final TlsFront front;
    final Path root;

    /** Everything up, the API server answering; {@code mode} goes into config.conf ("" as kubeadm leaves it). */
    ControlPlane(Path dir, String mode) throws Exception {
        api = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), new PagingApiDispatcher(), false);
        api.init(InetAddress.getLoopbackAddress(), 0);
        admin = api.createClient();
        cp = TestNetns.create("nftp-cp");
        node = TestNetns.create("nftp-node");
        TestNetns.run(List.of("ip", "link", "add", "cp0", "netns", cp.name(), "type", "veth", "peer", "name", "eth0",
                "netns", node.name()), null);
        cp.exec("ip", "addr", "add", ADDRESS + "/24", "dev", "cp0");
        cp.exec("ip", "link", "set", "cp0", "up");
        node.exec("ip", "addr", "add", NODE_ADDRESS + "/24", "dev", "eth0");
        node.exec("ip", "link", "set", "eth0", "up");
        front = TlsFront.create(dir, api.getPort(), Inet.parse(ADDRESS), cp.ns());
        front.up();
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a").endMetadata().withNewStatus()
                .addNewAddress().withType("InternalIP").withAddress(NODE_ADDRESS).endAddress().endStatus().build()).create();

        root = dir.resolve("root");
        Path conf = Files.createDirectories(root.resolve("var/lib/kube-proxy"));
        String config = KubeProxyConfigReaderTestAccess.kubeadmConfig();
        if (!mode.isEmpty()) {
            config = config.replace("mode: \"\"", "mode: " + mode);
        }
        Files.writeString(conf.resolve("config.conf"), config);
        Files.writeString(conf.resolve("kubeconfig.conf"), KubeProxyConfigReaderTestAccess.kubeadmKubeconfig()
                .replace("https://control-plane.example:6443", front.url()));
        Path sa = Files.createDirectories(serviceAccount());
        Files.copy(dir.resolve("ca.crt"), sa.resolve("ca.crt"));
        Files.writeString(sa.resolve("token"), TOKEN + "\n");
    }

    /** Where the service account's token and CA are, under {@link #root}. */
    Path serviceAccount() {
        return root.resolve("run/secrets/kubernetes.io/serviceaccount");
    }

    /** The ConfigMap's files, as the DaemonSet mounts them at /var/lib/kube-proxy. */
    Path configMap() {
        return root.resolve("var/lib/kube-proxy");
    }

    @Override
    public void close() throws Exception {
        try {
            front.close();
            admin.close();
        } finally {
            node.close();
            cp.close();
            api.destroy();
        }
    }
}
