package io.nftproxy.tools.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.sandbox.PagingApiDispatcher;

/**
 * A node and an API server at an address, as a node reaches its control plane: fabric8's mock API
 * server (HTTP) on the host end of a veth pair, holding the services and EndpointSlices of a
 * state and the Node object; the node a network namespace at the other end; kube-proxy's
 * configuration directory as kubeadm's ConfigMap leaves it (config.conf and a kubeconfig whose
 * server is that address), for a container to mount at /var/lib/kube-proxy, and the same file for
 * a process on the host.
 */
final class MockApiNode implements AutoCloseable {
    private static final Logger MOCK_LOG = Logger.getLogger("io.fabric8.mockwebserver");
    static final String HOST_IP = "10.231.9.1";
    static final String NODE_IP = "10.231.9.2";

    final String ns;
    final Path dir;
    final KubernetesMockServer server;
    private final String hostDev;

    private MockApiNode(String ns, String hostDev, Path dir, KubernetesMockServer server) {
        this.ns = ns;
        this.hostDev = hostDev;
        this.dir = dir;
        this.server = server;
    }

    /** The node's namespace and the API server, holding the Node object. */
    static MockApiNode start() throws Exception {
        MOCK_LOG.setLevel(Level.WARNING);
        long pid = ProcessHandle.current().pid();
        MockApiNode n = new MockApiNode("nftproxy-bench-api-" + pid, "nfpa" + (pid % 100000),
                Files.createTempDirectory("nftproxy-bench-api"), new KubernetesMockServer(new Context(), new MockWebServer(),
                        new HashMap<>(), new PagingApiDispatcher(), false));
        try {
            CompareBench.exec("ip", "netns", "add", n.ns);
            CompareBench.exec("ip", "link", "add", n.hostDev, "type", "veth", "peer", "name", "eth0", "netns", n.ns);
            CompareBench.exec("ip", "addr", "add", HOST_IP + "/30", "dev", n.hostDev);
            CompareBench.exec("ip", "link", "set", n.hostDev, "up");
            CompareBench.exec("ip", "-n", n.ns, "addr", "add", NODE_IP + "/30", "dev", "eth0");
            CompareBench.exec("ip", "-n", n.ns, "link", "set", "eth0", "up");
            CompareBench.exec("ip", "-n", n.ns, "link", "set", "lo", "up");
            n.server.init(InetAddress.getByName(HOST_IP), 0);
            try (KubernetesClient client = n.server.createClient()) {
                client.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a").endMetadata().withNewStatus()
                        .addNewAddress().withType("InternalIP").withAddress(NODE_IP).endAddress().endStatus().build()).create();
            }
            n.writeConfiguration();
            return n;
        } catch (Exception | Error e) {
            n.close();
            throw e;
        }
    }

    /** The services and EndpointSlices of {@code state}, created in the API server. */
    void load(ProxyState state) {
        try (KubernetesClient client = server.createClient()) {
            for (ServicePort svc : state.services().values()) {
                client.services().inNamespace(svc.id().namespace()).resource(DaemonBench.service(svc)).create();
                client.discovery().v1().endpointSlices().inNamespace(svc.id().namespace())
                        .resource(DaemonBench.slice(svc, state.endpointsOf(svc.id()))).create();
            }
        }
    }

    /**
     * kube-proxy's file as kubeadm leaves it where it matters here: mode "" and the kubeconfig's
     * path; conntrack left alone (no init container runs the privileged part).
     */
    private void writeConfiguration() throws IOException {
        String config = """
                apiVersion: kubeproxy.config.k8s.io/v1alpha1
                kind: KubeProxyConfiguration
                bindAddressHardFail: false
                clientConnection:
                  kubeconfig: %s
                conntrack:
                  maxPerCore: 0
                  min: 0
                  tcpEstablishedTimeout: 0s
                  tcpCloseWaitTimeout: 0s
                mode: ""
                """;
        String kubeconfig = """
                apiVersion: v1
                kind: Config
                clusters:
                - cluster: {server: %s}
                  name: bench
                contexts:
                - context: {cluster: bench, user: kube-proxy}
                  name: default
                current-context: default
                users:
                - name: kube-proxy
                  user: {token: bench}
                """.formatted(url());
        Path conf = Files.createDirectories(configDir());
        Files.writeString(conf.resolve("kubeconfig.conf"), kubeconfig);
        Files.writeString(conf.resolve("config.conf"), config.formatted("/var/lib/kube-proxy/kubeconfig.conf"));
        Files.writeString(processConfig(), config.formatted(conf.resolve("kubeconfig.conf")));
        Files.createDirectories(lockDir());
    }

    String url() {
        return "http://" + HOST_IP + ":" + server.getPort();
    }

    /** What a container mounts at /var/lib/kube-proxy (its config.conf names the kubeconfig there). */
    Path configDir() {
        return dir.resolve("kube-proxy");
    }

    /** The same configuration for a process on the host. */
    Path processConfig() {
        return dir.resolve("process.conf");
    }

    /** What a container mounts at /run/nftproxy (the instance lock). */
    Path lockDir() {
        return dir.resolve("lock");
    }

    /**
     * podman's command line for the image as kube-proxy's DaemonSet runs it, on this node: NET_ADMIN
     * only, a read-only root, the configuration and the lock mounted where the DaemonSet mounts
     * them; {@code extra} goes before the image (limits, environment).
     */
    List<String> podmanRun(String name, String image, List<String> extra, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of("podman", "--runtime", "runc", "run", "-d", "--name", name,
                "--network", "ns:/run/netns/" + ns, "--ulimit", "nofile=8192:8192", "--ulimit", "nproc=4096:4096",
                "--read-only", "--cap-drop=all", "--cap-add=NET_ADMIN", "-v", configDir() + ":/var/lib/kube-proxy:ro",
                "-v", lockDir() + ":/run/nftproxy", "--tmpfs", "/tmp:rw,exec"));
        cmd.addAll(extra);
        cmd.add(image);
        cmd.addAll(args);
        return cmd;
    }

    /** GET of a path on one of the node's local ports: the status (0 when nothing answers) and the body. */
    record Answer(int status, String body) {
    }

    Answer get(int port, String path) throws Exception {
        return NetNamespace.named(ns).call(() -> {
            try {
                HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + path).openConnection();
                c.setConnectTimeout(200);
                c.setReadTimeout(5000);
                int status = c.getResponseCode();
                try (InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream()) {
                    return new Answer(status, in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8));
                }
            } catch (IOException e) {
                return new Answer(0, "");
            }
        });
    }

    interface Log {
        String read() throws Exception;
    }

    /** Polls kube-proxy's /healthz on the node until it answers 200: nanoseconds since {@code t0}. */
    long untilHealthy(long t0, Duration limit, Log log) throws Exception {
        long deadline = t0 + limit.toNanos();
        while (System.nanoTime() < deadline) {
            if (get(10256, "/healthz").status() == 200) {
                return System.nanoTime() - t0;
            }
            Thread.sleep(10); // polling interval of a measurement, not synchronisation
        }
        throw new IOException("/healthz did not answer 200 within " + limit.toSeconds() + " s; the log:\n" + log.read());
    }

    static String output(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }

    @Override
    public void close() throws Exception {
        server.destroy();
        output("ip", "link", "del", hostDev);
        output("ip", "netns", "del", ns);
        output("rm", "-rf", dir.toString());
    }
}
