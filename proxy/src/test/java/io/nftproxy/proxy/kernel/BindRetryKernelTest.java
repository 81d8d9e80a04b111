package io.nftproxy.proxy.kernel;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.proxy.apiserver.NodeProcess;
import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * kube-proxy's bindAddressHardFail: false (its default, and kubeadm's) keeps the proxy running when
 * its health port is taken, says so, and binds it once it is free.
 */
class BindRetryKernelTest {
    @Test
    void aTakenHealthPortIsRetriedWhenHardFailIsOff(@TempDir Path dir) throws Exception {
        Kernel.require();
        Path manifests = Files.createDirectory(dir.resolve("m"));
        new Manifests().service("web", "10.96.0.10", "[{name: http, port: 80}]").write(manifests, "web.yaml");
        Path cfg = dir.resolve("config.conf");
        Files.writeString(cfg, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                + "bindAddressHardFail: false\n");
        ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        int port = taken.getLocalPort();
        try (TestNetns ns = TestNetns.create("nftp-bind");
             NodeProcess proxy = NodeProcess.start(List.of("run", "--config", cfg.toString(), "--manifests", manifests.toString(),
                     "--netns", ns.name(), "--hostname-override", "node-a", "--healthz-bind-address", "127.0.0.1:" + port,
                     "--metrics-bind-address", "127.0.0.1:0"))) {
            Sandbox.eventually(Duration.ofSeconds(30), () -> proxy.output().contains("--healthz-bind-address 127.0.0.1:" + port
                    + ": Address already in use; retrying every 5 s"), "the taken port is said:\n" + proxy.output());
            Sandbox.eventually(Duration.ofSeconds(30), () -> ns.exec("nft", "list", "tables").contains("nftproxy"),
                    "the proxy runs on and syncs");
            assertTrue(proxy.alive(), proxy.output());
            taken.close();
            Sandbox.eventually(Duration.ofSeconds(30), () -> NodeProcess.get(port, "/livez") == 200,
                    "bound once free:\n" + proxy.output());
        } finally {
            taken.close();
        }
    }
}
