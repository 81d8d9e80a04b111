package io.nftproxy.proxy.apiserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.nftproxy.proxy.cli.DryRunCliTest;
import io.nftproxy.sandbox.PagingApiDispatcher;
import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * The API server away, seen from the node: the proxy runs as its own process with a kubeconfig
 * as kubeadm gives kube-proxy (the control plane's address over TLS, the CA file, a token file),
 * the API server is not there when it starts, comes, goes and comes back on the same address.
 */
class ApiServerAwayKernelTest {
    static final Duration WAIT = Duration.ofSeconds(90); // reconnecting informers back off for seconds

    static void eventually(Callable<Boolean> check, String what) throws Exception {
        Sandbox.eventually(WAIT, check, what);
    }

    static Service service(String name, String ip) {
        return new ServiceBuilder().withNewMetadata().withName(name).withNamespace("shop").endMetadata()
                .withNewSpec().withClusterIP(ip).withClusterIPs(ip).addNewPort().withName("http").withPort(80)
                .withProtocol("TCP").endPort().endSpec().build();
    }

    /** kubeadm's kube-proxy kubeconfig, with the control plane's address, a CA file and a token file. */
    static Path kubeconfig(Path dir, String server) throws Exception {
        Files.writeString(dir.resolve("token"), "nftproxy-test-token\n");
        Path k = dir.resolve("kubeconfig.conf");
        Files.writeString(k, """
                apiVersion: v1
                kind: Config
                clusters:
                - cluster:
                    certificate-authority: %s
                    server: %s
                  name: default
                contexts:
                - context:
                    cluster: default
                    namespace: default
                    user: default
                  name: default
                current-context: default
                users:
                - name: default
                  user:
                    tokenFile: %s
                """.formatted(dir.resolve("ca.crt"), server, dir.resolve("token")));
        return k;
    }

    @Test
    void theProxyOutlivesItsApiServerAndSyncsWhenItAnswers(@TempDir Path dir) throws Exception {
        Kernel.require();
        KubernetesMockServer api = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new PagingApiDispatcher(), false);
        api.init(InetAddress.getLoopbackAddress(), 0);
        int health = NodeProcess.freePort();
        try (KubernetesClient admin = api.createClient(); TlsFront front = TlsFront.create(dir, api.getPort());
             TestNetns node = TestNetns.create("nftp-away")) {
            admin.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a").endMetadata().withNewStatus()
                    .addNewAddress().withType("InternalIP").withAddress("192.168.50.2").endAddress().endStatus().build()).create();
            admin.services().inNamespace("shop").resource(service("cart", "10.96.7.1")).create();
            Path kubeconfig = kubeconfig(dir, front.url());

            // 1. The API server is not there when the proxy starts.
            try (NodeProcess proxy = NodeProcess.start(List.of("run", "--kubeconfig", kubeconfig.toString(), "--netns", node.name(),
                    "--hostname-override", "node-a", "--healthz-bind-address", "127.0.0.1:" + health,
                    "--metrics-bind-address", "127.0.0.1:0", "--min-sync-period", "100ms"))) {
                eventually(() -> NodeProcess.get(health, "/livez") == 200, "/livez answers 200 while the API server is away");
                eventually(() -> proxy.output().split("failed: Connection refused; retrying", -1).length > 3,
                        "each failed attempt is said, and retried:\n" + proxy.output());
                assertTrue(proxy.alive(), proxy.output());
                assertEquals(503, NodeProcess.get(health, "/healthz"), "not ready before the first sync");
                assertTrue(proxy.output().contains("listing services from API server " + front.url()
                        + " failed: Connection refused; retrying"), proxy.output());
                assertFalse(proxy.output().contains("\tat "), "no stack traces at the default verbosity:\n" + proxy.output());
                assertFalse(node.exec("nft", "list", "tables").contains("nftproxy"), "nothing synced from an empty store");

                // 2. It comes: the first listing is synced, and the proxy turns ready.
                front.up();
                eventually(() -> NodeProcess.get(health, "/healthz") == 200, "/healthz turns 200 after the first sync");
                assertTrue(node.exec("nft", "list", "table", "ip", "nftproxy").contains("10.96.7.1"));
                assertEquals(Set.of("nftproxy-test-token"), front.tokens(), "the token file's token is presented");

                // 3. It goes away while the proxy runs: the proxy stays, alive and ready, the rules stay.
                front.down();
                eventually(() -> proxy.output().contains("watching services from API server " + front.url() + " stopped; reconnecting"),
                        "the lost watch is said:\n" + proxy.output());
                String rules = node.exec("nft", "list", "table", "ip", "nftproxy");
                assertTrue(proxy.alive(), proxy.output());
                assertEquals(200, NodeProcess.get(health, "/livez"));
                assertEquals(200, NodeProcess.get(health, "/healthz"), "no change waits: the node stays ready");
                assertEquals(rules, node.exec("nft", "list", "table", "ip", "nftproxy"), "the rules are unchanged meanwhile");

                // 4. It comes back on the same address: a change made now arrives.
                front.up();
                admin.services().inNamespace("shop").resource(service("checkout", "10.96.7.3")).create();
                eventually(() -> node.exec("nft", "list", "table", "ip", "nftproxy").contains("10.96.7.3"),
                        "a service created after the API server came back reaches the kernel");
                eventually(() -> proxy.output().contains("watching services from API server " + front.url() + " again"),
                        "the watch coming back is said:\n" + proxy.output());
                assertFalse(proxy.output().contains("\tat "), "no stack traces at the default verbosity:\n" + proxy.output());
                assertEquals(143, proxy.stop(), "SIGTERM ends it as it ends a JVM");
            }
        } finally {
            api.destroy();
        }
    }

    @Test
    void aMissingOrInvalidKubeconfigIsOneLineNamingTheFile(@TempDir Path dir) throws Exception {
        DryRunCliTest.Result missing = DryRunCliTest.cli("run", "--kubeconfig",
                dir.resolve("nokube").toString(), "--once", "--dry-run", "--hostname-override", "n");
        assertEquals(1, missing.exit());
        assertEquals("nftproxy: kubeconfig " + dir.resolve("nokube") + ": no such file\n", missing.err());
        Path bad = dir.resolve("bad");
        Files.writeString(bad, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n");
        DryRunCliTest.Result invalid = DryRunCliTest.cli("run", "--kubeconfig",
                bad.toString(), "--once", "--dry-run", "--hostname-override", "n");
        assertEquals(1, invalid.exit());
        assertEquals("nftproxy: kubeconfig " + bad + " has no current-context and no contexts\n", invalid.err());
        Path noToken = kubeconfig(dir, "https://127.0.0.1:1");
        Files.delete(dir.resolve("token"));
        DryRunCliTest.Result tokenless = DryRunCliTest.cli("run", "--kubeconfig",
                noToken.toString(), "--once", "--dry-run", "--hostname-override", "n");
        assertEquals(1, tokenless.exit());
        assertEquals("nftproxy: kubeconfig " + noToken + ": user 'default': tokenFile " + dir.resolve("token")
                + ": no such file\n", tokenless.err());
    }
}
