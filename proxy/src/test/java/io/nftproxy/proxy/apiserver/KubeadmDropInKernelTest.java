package io.nftproxy.proxy.apiserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.proxy.cli.DryRunCliTest;
import io.nftproxy.sandbox.Sandbox;
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
    static void eventually(Callable<Boolean> check, String what) throws Exception {
        Sandbox.eventually(Duration.ofSeconds(60), check, what);
    }

    /** kubeadm's command line in the node's namespace, with kubeadm's mounts under the control plane's root. */
    static List<String> kubeadmCommand(ControlPlane k8s) {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", k8s.node.name(), "unshare", "--mount", "sh", "-c",
                "mount --make-rprivate / && mount --bind \"$0/var/lib\" /var/lib && mount --bind \"$0/run\" /run"
                        + " && exec \"$@\"", k8s.root.toString()));
        cmd.addAll(NodeProcess.command(List.of("kube-proxy", "--config=/var/lib/kube-proxy/config.conf",
                "--hostname-override=node-a")));
        return cmd;
    }

    /** The events kube-proxy records on its Node: reason, type and note, in the order made. */
    static List<String> nodeEvents(ControlPlane k8s) {
        return k8s.admin.events().v1().events().inNamespace("default").list().getItems().stream()
                .filter(e -> "Node".equals(e.getRegarding().getKind()) && "node-a".equals(e.getRegarding().getName()))
                .sorted(Comparator.comparing(e -> e.getEventTime().getTime()))
                .map(e -> e.getReason() + " " + e.getType() + " " + e.getAction() + ": " + e.getNote()).toList();
    }

    /**
     * kubeadm leaves bindAddressHardFail false: with the health port taken, the proxy runs on, says
     * it, records it on the Node as kube-proxy does (FailedToStartProxierHealthcheck), and announces
     * its start.
     */
    @Test
    void aTakenHealthPortIsRecordedOnTheNode(@TempDir Path dir) throws Exception {
        Kernel.require();
        try (ControlPlane k8s = new ControlPlane(dir, "");
             ServerSocket taken = k8s.node.ns().call(() -> new ServerSocket(10256));
             NodeProcess proxy = NodeProcess.run(kubeadmCommand(k8s))) {
            eventually(() -> nodeEvents(k8s).stream().anyMatch(e -> e.startsWith("Starting Normal StartKubeProxy")),
                    "the Starting event:\n" + nodeEvents(k8s) + "\n" + proxy.output());
            eventually(() -> nodeEvents(k8s).stream().anyMatch(e -> e.startsWith(
                    "FailedToStartProxierHealthcheck Warning StartKubeProxy: ") && e.contains("0.0.0.0:10256")),
                    "the taken port recorded:\n" + nodeEvents(k8s) + "\n" + proxy.output());
            assertTrue(proxy.alive(), proxy.output());
            assertTrue(proxy.output().contains("retrying every 5 s"), proxy.output());
        }
    }

    @ParameterizedTest(name = "mode: \"{0}\"")
    @CsvSource({"''", "iptables"})
    void kubeadmsDaemonSetRunsNftproxyInKubeProxysPlace(String mode, @TempDir Path dir) throws Exception {
        Kernel.require();
        try (ControlPlane k8s = new ControlPlane(dir, mode)) {
            k8s.admin.services().inNamespace("shop").resource(ApiServerAwayKernelTest.service("cart", "10.96.7.1")).create();
            TestNetns node = k8s.node;
            try (NodeProcess proxy = NodeProcess.run(kubeadmCommand(k8s))) {
                eventually(() -> NodeProcess.fetch(node.ns(), 10256, "/healthz").code() == 200,
                        "/healthz on kube-proxy's port turns 200:\n" + proxy.output());
                if (mode.isEmpty()) {
                    assertTrue(node.exec("nft", "list", "table", "ip", "nftproxy").contains("10.96.7.1"), proxy.output());
                    assertTrue(proxy.output().contains("mode \"\" means nftables here"), proxy.output());
                } else {
                    assertTrue(node.exec("iptables-save").contains("-d 10.96.7.1/32"), proxy.output()); // no endpoints: a REJECT
                }
                NodeProcess.Answer metrics = NodeProcess.fetch(node.ns(), 10249, "/metrics");
                assertEquals(200, metrics.code());
                assertTrue(metrics.body().contains("kubeproxy_sync_proxy_rules_last_timestamp_seconds"), metrics.body());
                assertEquals(mode.isEmpty() ? "nftables" : "iptables", NodeProcess.fetch(node.ns(), 10249, "/proxyMode").body());
                String flagz = NodeProcess.fetch(node.ns(), 10249, "/flagz").body();
                assertTrue(flagz.startsWith("kube-proxy flags\n") && flagz.contains("\nconfig=/var/lib/kube-proxy/config.conf\n")
                        && flagz.contains("\nhostname-override=node-a\n"), "kubeadm's flags on /flagz:\n" + flagz);
                String statusz = NodeProcess.fetch(node.ns(), 10249, "/statusz").body();
                assertTrue(statusz.startsWith("kube-proxy statusz\n") && statusz.contains("\nPaths: /configz /flagz /metrics"
                        + " /proxyMode /statusz\n"), statusz);
                assertEquals(Set.of(ControlPlane.TOKEN), k8s.front.tokens(), "the service account's token is sent");
                assertEquals("86400", node.exec("sysctl", "-n", "net.netfilter.nf_conntrack_tcp_timeout_established").trim(),
                        "conntrack.tcpEstablishedTimeout's default, 24h, set in the node's namespace");
                assertTrue(proxy.alive(), proxy.output());
                assertTrue(!proxy.output().contains("\tat "), "no stack traces:\n" + proxy.output());
            } finally {
                if (!mode.isEmpty()) {
                    DryRunCliTest.cli("cleanup", "--netns", node.name(), "--mode", "all");
                }
            }
        }
    }
}
