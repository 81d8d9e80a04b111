package io.nftproxy.tools.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.ServiceList;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

import io.nftproxy.proxy.model.ProxyState;

/**
 * kube-proxy's command line against an API server at an address, as a node runs it
 * ({@link MockApiNode}). Timed from the start of the command to the first {@code /healthz} 200
 * (which needs the first full sync and the Node object): once as nftproxy's image under podman
 * (the DaemonSet's container: NET_ADMIN only, a read-only root), once as a process of the same
 * jar, side by side. Also what the JSON the client library speaks costs (fabric8 has no
 * protobuf): the initial lists' size and their decoding time.
 */
public final class ApiServerBench {
    private static final Duration DEADLINE = Duration.ofMinutes(3);

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
        try (MockApiNode node = MockApiNode.start()) {
            node.load(state);
            long jsonBytes;
            long decodeNanos;
            try (KubernetesClient client = node.server.createClient()) {
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

            long container = -1;
            String containerSync = "";
            if (image != null) {
                String name = "nftproxy-bench-" + ProcessHandle.current().pid();
                List<String> cmd = node.podmanRun(name, image, List.of(),
                        List.of("--config=/var/lib/kube-proxy/config.conf", "--hostname-override=node-a"));
                try {
                    long t0 = System.nanoTime();
                    CompareBench.exec(cmd.toArray(String[]::new));
                    container = node.untilHealthy(t0, DEADLINE, () -> MockApiNode.output("podman", "logs", name));
                    containerSync = MockApiNode.output("podman", "logs", name).lines().filter(l -> l.contains("full sync:"))
                            .findFirst().map(l -> l.substring(l.indexOf("full sync:"))).orElse("");
                } finally {
                    MockApiNode.output("podman", "--runtime", "runc", "rm", "-f", "-t", "5", name);
                }
                CompareBench.exec("ip", "netns", "exec", node.ns, "nft", "flush", "ruleset");
            }

            List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", node.ns));
            cmd.addAll(launcher);
            cmd.addAll(List.of("kube-proxy", "--config=" + node.processConfig(), "--hostname-override=node-a"));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(node.dir.resolve("process.log").toFile());
            long t0 = System.nanoTime();
            Process p = pb.start();
            long process;
            try {
                process = node.untilHealthy(t0, DEADLINE, () -> Files.readString(node.dir.resolve("process.log")));
            } finally {
                p.destroy();
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
            return new Figures(container, process, containerSync, jsonBytes, decodeNanos);
        }
    }
}
