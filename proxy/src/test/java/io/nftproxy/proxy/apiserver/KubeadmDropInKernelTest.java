package io.nftproxy.proxy.apiserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.Callable;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.KubeProxyConfigReaderTestAccess;
import io.nftproxy.proxy.sandbox.Sandbox;
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * kube-proxy's own DaemonSet, with nftproxy in kube-proxy's place: kubeadm's ConfigMap files
 * (config.conf as kubeadm renders it, kubeconfig.conf with the control plane's endpoint, the
 * service account's token and CA) at kubeadm's mount paths, and kubeadm's command line
 * {@code kube-proxy --config=/var/lib/kube-proxy/config.conf --hostname-override=$(NODE_NAME)},
 * run in a node's network namespace (its host network) against an API server on the control
 * plane's own address.
 */
class KubeadmDropInKernelTest {
    static final String CONTROL_PLANE = "10.231.0.1";
    static final String NODE_ADDRESS = "10.231.0.2";

    static void eventually(Callable<Boolean> check, String what) throws Exception {
        Sandbox.eventually(Duration.ofSeconds(60), check, what);
    }

    @ParameterizedTest(name = "mode: \"{0}\"")
    @CsvSource({"''", "iptables"})
    void kubeadmsDaemonSetRunsNftproxyInKubeProxysPlace(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        KubernetesMockServer api = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        api.init(InetAddress.getLoopbackAddress(), 0);
        try (KubernetesClient admin = api.createClient(); TestNetns cp = TestNetns.create("nftp-cp");
             TestNetns node = TestNetns.create("nftp-kubeadm")) {
            // The control plane and the node on one link, each in its own namespace.
            TestNetns.run(List.of("ip", "link", "add", "cp0", "netns", cp.name(), "type", "veth", "peer", "name", "eth0",
                    "netns", node.name()), null);
            cp.exec("ip", "addr", "add", CONTROL_PLANE + "/24", "dev", "cp0");
            cp.exec("ip", "link", "set", "cp0", "up");
            node.exec("ip", "addr", "add", NODE_ADDRESS + "/24", "dev", "eth0");
            node.exec("ip", "link", "set", "eth0", "up");
            TlsFront front = TlsFront.create(dir, api.getPort(), Inet.parse(CONTROL_PLANE), cp.ns());
            front.up();

            admin.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a").endMetadata().withNewStatus()
                    .addNewAddress().withType("InternalIP").withAddress(NODE_ADDRESS).endAddress().endStatus().build()).create();
            admin.services().inNamespace("shop").resource(ApiServerAwayKernelTest.service("cart", "10.96.7.1")).create();

            // kubeadm's ConfigMap, as the DaemonSet mounts it, and the service account's files.
            Path root = dir.resolve("root");
            Path conf = Files.createDirectories(root.resolve("var/lib/kube-proxy"));
            String config = KubeProxyConfigReaderTestAccess.kubeadmConfig();
            if (!mode.isEmpty()) {
                config = config.replace("mode: \"\"", "mode: " + mode);
            }
            Files.writeString(conf.resolve("config.conf"), config);
            Files.writeString(conf.resolve("kubeconfig.conf"), KubeProxyConfigReaderTestAccess.kubeadmKubeconfig()
                    .replace("https://control-plane.example:6443", front.url()));
            Path sa = Files.createDirectories(root.resolve("run/secrets/kubernetes.io/serviceaccount"));
            Files.copy(dir.resolve("ca.crt"), sa.resolve("ca.crt"));
            Files.writeString(sa.resolve("token"), "kube-proxy-sa-token\n");

            List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", node.name(), "unshare", "--mount", "sh", "-c",
                    "mount --make-rprivate / && mount --bind \"$0/var/lib\" /var/lib && mount --bind \"$0/run\" /run"
                            + " && exec \"$@\"", root.toString()));
            cmd.addAll(NodeProcess.command(List.of("kube-proxy", "--config=/var/lib/kube-proxy/config.conf",
                    "--hostname-override=node-a")));
            try (NodeProcess proxy = NodeProcess.run(cmd)) {
                eventually(() -> NodeProcess.fetch(node.ns(), 10256, "/healthz").code() == 200,
                        "/healthz on kube-proxy's port turns 200:\n" + proxy.output());
                if (mode.isEmpty()) {
                    assertTrue(node.exec("nft", "list", "table", "ip", "nftproxy").contains("10.96.7.1"), proxy.output());
                    assertTrue(proxy.output().contains("mode \"\" means nftables here"), proxy.output());
                } else {
                    assertTrue(node.exec("iptables-save").contains("-d 10.96.7.1/32"), proxy.output()); // no endpoints: a REJECT in filter
                }
                NodeProcess.Answer metrics = NodeProcess.fetch(node.ns(), 10249, "/metrics");
                assertEquals(200, metrics.code());
                assertTrue(metrics.body().contains("kubeproxy_sync_proxy_rules_last_timestamp_seconds"), metrics.body());
                assertEquals(mode.isEmpty() ? "nftables" : "iptables", NodeProcess.fetch(node.ns(), 10249, "/proxyMode").body());
                assertEquals(java.util.Set.of("kube-proxy-sa-token"), front.tokens(), "the service account's token is sent");
                assertEquals("86400", node.exec("sysctl", "-n", "net.netfilter.nf_conntrack_tcp_timeout_established").trim(),
                        "conntrack.tcpEstablishedTimeout's default, 24h, set in the node's namespace");
                assertTrue(proxy.alive(), proxy.output());
                assertTrue(!proxy.output().contains("\tat "), "no stack traces:\n" + proxy.output());
            } finally {
                front.close();
                if (!mode.isEmpty()) {
                    Main.cleanup(node.name());
                }
            }
        } finally {
            api.destroy();
        }
    }

    /** What the test leaves in iptables mode is removed as kube-proxy --cleanup removes it. */
    static final class Main {
        static void cleanup(String netns) {
            io.nftproxy.proxy.cli.DryRunCliTest.cli("cleanup", "--netns", netns, "--mode", "all");
        }
    }
}
