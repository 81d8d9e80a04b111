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
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ServiceList;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ProxyState;

/**
 * kube-proxy's command line against an API server at an address, as a node runs it: fabric8's
 * mock API server (HTTP) on the host end of a veth pair, the proxy in a network namespace at the
 * other end, reading kube-proxy's config file and a kubeconfig whose server is that address. Timed
 * from the start of the command to the first {@code /healthz} 200 (which needs the first full sync
 * and the Node object): once as nftproxy's image under podman (the DaemonSet's container: NET_ADMIN
 * only, a read-only root), once as a process of the same jar, side by side. Also what the JSON the
 * client library speaks costs (fabric8 has no protobuf): the initial lists' size and their decoding
 * time.
 */
public final class ApiServerBench {
    private static final Logger MOCK_LOG = Logger.getLogger("io.fabric8.mockwebserver");
    private static final Duration DEADLINE = Duration.ofMinutes(3);
    private static final String HOST_IP = "10.231.9.1";
    private static final String NODE_IP = "10.231.9.2";

    private ApiServerBench() {
    }

    /** What one size measured. */
    public record Figures(long containerNanos, long processNanos, String containerSync, long jsonBytes, long decodeNanos) {
    }

    /**
     * @param image     nftproxy's image (podman), or null to time the process only
     * @param launcher  the command that starts the product (the launcher, told the heap limit), up to
     *                  its subcommand
     */
    public static Figures run(ProxyState state, String image, List<String> launcher) throws Exception {
        MOCK_LOG.setLevel(Level.WARNING);
        String ns = "nftproxy-bench-api-" + ProcessHandle.current().pid();
        String hostDev = "nfpa" + (ProcessHandle.current().pid() % 100000);
        Path dir = Files.createTempDirectory("nftproxy-bench-api");
        CompareBench.exec("ip", "netns", "add", ns);
        KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        try {
            CompareBench.exec("ip", "link", "add", hostDev, "type", "veth", "peer", "name", "eth0", "netns", ns);
            CompareBench.exec("ip", "addr", "add", HOST_IP + "/30", "dev", hostDev);
            CompareBench.exec("ip", "link", "set", hostDev, "up");
            CompareBench.exec("ip", "-n", ns, "addr", "add", NODE_IP + "/30", "dev", "eth0");
            CompareBench.exec("ip", "-n", ns, "link", "set", "eth0", "up");
            CompareBench.exec("ip", "-n", ns, "link", "set", "lo", "up");
            server.init(InetAddress.getByName(HOST_IP), 0);
            long jsonBytes;
            long decodeNanos;
            try (KubernetesClient client = server.createClient()) {
                client.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a").endMetadata().withNewStatus()
                        .addNewAddress().withType("InternalIP").withAddress(NODE_IP).endAddress().endStatus().build()).create();
                for (ServicePort svc : state.services().values()) {
                    client.services().inNamespace(svc.id().namespace()).resource(DaemonBench.service(svc)).create();
                    client.discovery().v1().endpointSlices().inNamespace(svc.id().namespace())
                            .resource(DaemonBench.slice(svc, state.endpointsOf(svc.id()))).create();
                }
                KubernetesSerialization json = client.getKubernetesSerialization();
                String services = json.asJson(client.services().inAnyNamespace().list());
                String slices = json.asJson(client.discovery().v1().endpointSlices().inAnyNamespace().list());
                jsonBytes = services.getBytes(StandardCharsets.UTF_8).length + slices.getBytes(StandardCharsets.UTF_8).length;
                long[] decode = new long[7];
                for (int i = 0; i < decode.length; i++) {
                    long t = System.nanoTime();
                    json.unmarshal(services, ServiceList.class);
                    json.unmarshal(slices, EndpointSliceList.class);
                    decode[i] = System.nanoTime() - t;
                }
                Arrays.sort(decode);
                decodeNanos = decode[decode.length / 2];
            }
            String server0 = "http://" + HOST_IP + ":" + server.getPort();
            // kube-proxy's file as kubeadm leaves it where it matters here: mode "" and the
            // kubeconfig's path; conntrack left alone (no init container runs the privileged part).
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
                    """.formatted(server0);
            Path conf = Files.createDirectories(dir.resolve("kube-proxy"));
            Files.writeString(conf.resolve("kubeconfig.conf"), kubeconfig);
            Files.writeString(conf.resolve("config.conf"), config.formatted("/var/lib/kube-proxy/kubeconfig.conf"));
            Files.writeString(dir.resolve("process.conf"), config.formatted(conf.resolve("kubeconfig.conf")));
            Files.createDirectories(dir.resolve("lock"));

            long container = -1;
            String containerSync = "";
            if (image != null) {
                String name = "nftproxy-bench-" + ProcessHandle.current().pid();
                List<String> cmd = List.of("podman", "--runtime", "runc", "run", "-d", "--name", name, "--network",
                        "ns:/run/netns/" + ns, "--ulimit", "nofile=8192:8192", "--ulimit", "nproc=4096:4096",
                        "--read-only", "--cap-drop=all", "--cap-add=NET_ADMIN", "-v", conf + ":/var/lib/kube-proxy:ro",
                        "-v", dir.resolve("lock") + ":/run/nftproxy", "--tmpfs", "/tmp:rw,exec", image,
                        "--config=/var/lib/kube-proxy/config.conf", "--hostname-override=node-a");
                try {
                    long t0 = System.nanoTime();
                    CompareBench.exec(cmd.toArray(String[]::new));
                    container = untilHealthy(ns, t0, () -> output("podman", "logs", name));
                    containerSync = output("podman", "logs", name).lines().filter(l -> l.contains("full sync:")).findFirst()
                            .map(l -> l.substring(l.indexOf("full sync:"))).orElse("");
                } finally {
                    output("podman", "--runtime", "runc", "rm", "-f", "-t", "5", name);
                }
                CompareBench.exec("ip", "netns", "exec", ns, "nft", "flush", "ruleset");
            }

            List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns));
            cmd.addAll(launcher);
            cmd.addAll(List.of("kube-proxy", "--config=" + dir.resolve("process.conf"), "--hostname-override=node-a"));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("process.log").toFile());
            long t0 = System.nanoTime();
            Process p = pb.start();
            long process;
            try {
                process = untilHealthy(ns, t0, () -> Files.readString(dir.resolve("process.log")));
            } finally {
                p.destroy();
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
            return new Figures(container, process, containerSync, jsonBytes, decodeNanos);
        } finally {
            server.destroy();
            output("ip", "link", "del", hostDev);
            output("ip", "netns", "del", ns);
            output("rm", "-rf", dir.toString());
        }
    }

    private interface Log {
        String read() throws Exception;
    }

    /** Polls kube-proxy's /healthz in the namespace until it answers 200: nanoseconds since {@code t0}. */
    private static long untilHealthy(String ns, long t0, Log log) throws Exception {
        NetNamespace netns = NetNamespace.named(ns);
        long deadline = t0 + DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            int code = netns.call(() -> {
                try {
                    HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:10256/healthz").openConnection();
                    c.setConnectTimeout(200);
                    c.setReadTimeout(1000);
                    int status = c.getResponseCode();
                    try (InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream()) {
                        if (in != null) {
                            in.readAllBytes();
                        }
                    }
                    return status;
                } catch (IOException e) {
                    return 0;
                }
            });
            if (code == 200) {
                return System.nanoTime() - t0;
            }
            Thread.sleep(10); // polling interval of a measurement, not synchronisation
        }
        throw new IOException("/healthz did not answer 200 within " + DEADLINE.toSeconds() + " s; the log:\n" + log.read());
    }

    private static String output(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }
}
