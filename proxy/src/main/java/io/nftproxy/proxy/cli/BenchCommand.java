package io.nftproxy.proxy.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.nft.NftClient;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The benchmark harness: full syncs of N services x k endpoints into a fresh network namespace,
 * then single-endpoint changes at that size, with userspace and kernel time apart; optionally
 * nft -f of the very same ruleset side by side, for a ratio measured in one run.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Measure full and partial sync times in fresh network namespaces (needs root).")
final class BenchCommand implements Callable<Integer> {
    @Option(names = "--services", split = ",", defaultValue = "1000,10000", description = "Service counts (default: ${DEFAULT-VALUE}).")
    List<Integer> services;

    @Option(names = "--endpoints", defaultValue = "10", description = "Endpoints per service (default: ${DEFAULT-VALUE}).")
    int endpoints;

    @Option(names = "--changes", defaultValue = "200", description = "Single-endpoint changes timed per size (default: ${DEFAULT-VALUE}).")
    int changes;

    @Option(names = "--run-once", description = "Also time 'run --manifests DIR --once' (parsing the YAML of the same"
            + " services, then one full sync), in another fresh namespace.")
    boolean runOnce;

    @Option(names = "--compare-kube-proxy-layout", description = "Also time nft -f of kube-proxy's nftables-mode layout"
            + " (per-service numgen vmap, per-endpoint chains) for the same services, in another fresh namespace.")
    boolean compareKubeProxy;

    @Override
    public Integer call() throws Exception {
        System.out.printf("%-9s %-9s %10s %10s %10s %10s %10s %9s %9s %9s %9s %9s%n", "services", "endpoints", "full_ms",
                "render_ms", "encode_ms", "kernel_ms", "messages", "chg_p50", "chg_p99", "chg_max", "add_p50", "add_p99");
        for (int n : services) {
            run(n);
        }
        return 0;
    }

    static ProxyConfig config() {
        return new ProxyConfig("node-a", List.of(ip(0xc0a83202)), List.of(Cidr.parse("10.128.0.0/9")),
                List.of(Cidr.parse("10.96.0.0/12")), List.of(), false, 14, Duration.ZERO, Duration.ofSeconds(30), "nftproxy");
    }

    static InetAddress ip(int v) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** N services, each one TCP port with k ready endpoints spread over 100 nodes; every tenth a NodePort. */
    static ProxyState synthetic(int n, int k, int generation) {
        TreeMap<ServicePortName, ServicePort> svcs = new TreeMap<>();
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>();
        int svcBase = 0x0a600000; // 10.96.0.0
        int podBase = 0x0a800000; // 10.128.0.0
        for (int i = 0; i < n; i++) {
            ServicePortName id = new ServicePortName("bench", "svc-" + i, "http", Protocol.TCP);
            svcs.put(id, new ServicePort(id, List.of(ip(svcBase + i + 1)), 80, i % 10 == 0 ? 30000 + i % 2000 : 0,
                    List.of(), List.of(), List.of(), false, false, 0, 0));
            List<Endpoint> list = new ArrayList<>(k);
            for (int j = 0; j < k; j++) {
                list.add(Endpoint.ready(ip(podBase + (i * k + j + generation * 7) % 0x7fffff), 8080, "node-" + (j % 100)));
            }
            eps.put(id, list);
        }
        return new ProxyState(svcs, eps, new NodeInfo("node-a", null, List.of(ip(0xc0a83202)), false));
    }

    private void run(int n) throws Exception {
        String nsName = "nftproxy-bench-" + ProcessHandle.current().pid();
        exec("ip", "netns", "add", nsName);
        try (NftClient client = NftClient.open(NetNamespace.named(nsName))) {
            NftRenderer renderer = new NftRenderer(config());
            Syncer syncer = new Syncer(client, renderer, "nftproxy");
            ProxyState state = synthetic(n, endpoints, 0);
            System.gc();
            long t0 = System.nanoTime();
            SyncResult full = syncer.sync(state, null);
            long fullNanos = System.nanoTime() - t0;

            TreeMap<ServicePortName, ServicePort> svcs = new TreeMap<>(state.services());
            Map<ServicePortName, List<Endpoint>> eps = new HashMap<>(state.endpoints());
            // One endpoint of one service replaced; then one endpoint added (the service moves to
            // another pick-k chain: a verdict changes). Timed from the new model to the kernel's ack.
            long[] lat = timeChanges(syncer, svcs, eps, state, c -> (c * 7919) % n,
                    (list, c) -> list.set(c % list.size(), Endpoint.ready(ip(0x0b000000 + c), 8080, "node-x")));
            long[] add = timeChanges(syncer, svcs, eps, state, c -> (c * 104_729 + 13) % n,
                    (list, c) -> list.add(Endpoint.ready(ip(0x0c000000 + c), 8080, "node-y")));
            System.out.printf("%-9d %-9d %10.0f %10.0f %10.0f %10.0f %10d %9.2f %9.2f %9.2f %9.2f %9.2f%n", n, endpoints,
                    fullNanos / 1e6, full.renderNanos() / 1e6, full.commit().encodeNanos() / 1e6,
                    full.commit().kernelNanos() / 1e6, full.commit().messages(),
                    changes == 0 ? 0 : lat[changes / 2] / 1e6, changes == 0 ? 0 : lat[(int) (changes * 0.99)] / 1e6,
                    changes == 0 ? 0 : lat[changes - 1] / 1e6, changes == 0 ? 0 : add[changes / 2] / 1e6,
                    changes == 0 ? 0 : add[(int) (changes * 0.99)] / 1e6);
            if (compareKubeProxy) {
                compare(state, nsName, fullNanos);
            }
            if (runOnce) {
                timeRunOnce(state, nsName);
            }
        } finally {
            exec("ip", "netns", "del", nsName);
        }
    }

    private long[] timeChanges(Syncer syncer, TreeMap<ServicePortName, ServicePort> svcs,
                               Map<ServicePortName, List<Endpoint>> eps, ProxyState state,
                               java.util.function.IntUnaryOperator pick,
                               java.util.function.ObjIntConsumer<List<Endpoint>> mutate) throws Exception {
        long[] lat = new long[changes];
        for (int c = 0; c < changes; c++) {
            ServicePortName id = new ServicePortName("bench", "svc-" + pick.applyAsInt(c), "http", Protocol.TCP);
            List<Endpoint> list = new ArrayList<>(eps.get(id));
            mutate.accept(list, c);
            eps.put(id, list);
            ProxyState changed = new ProxyState(svcs, eps, state.node());
            long s = System.nanoTime();
            syncer.sync(changed, Set.of(id));
            lat[c] = System.nanoTime() - s;
        }
        Arrays.sort(lat);
        return lat;
    }

    /** The same services as manifests, through the command line's run --once (parse, convert, sync). */
    private void timeRunOnce(ProxyState state, String ours) throws Exception {
        Path dir = Files.createTempDirectory("nftproxy-bench-manifests");
        String other = ours + "-once";
        try {
            StringBuilder sb = new StringBuilder();
            for (ServicePort svc : state.services().values()) {
                String ip = svc.clusterIPs().get(0).getHostAddress();
                String name = svc.id().name();
                sb.append("apiVersion: v1\nkind: Service\nmetadata: {name: ").append(name).append(", namespace: bench}\n")
                        .append("spec: {clusterIP: ").append(ip).append(", ports: [{name: http, port: 80")
                        .append(svc.nodePort() != 0 ? ", nodePort: " + svc.nodePort() : "").append("}]")
                        .append(svc.nodePort() != 0 ? ", type: NodePort" : "").append("}\n---\n");
                sb.append("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: ").append(name)
                        .append("-x, namespace: bench, labels: {kubernetes.io/service-name: ").append(name)
                        .append("}}\naddressType: IPv4\nports: [{name: http, port: 8080, protocol: TCP}]\nendpoints:\n");
                for (Endpoint e : state.endpointsOf(svc.id())) {
                    sb.append("- {addresses: [\"").append(e.address().getHostAddress()).append("\"], nodeName: ")
                            .append(e.nodeName()).append("}\n");
                }
                sb.append("---\n");
            }
            Files.writeString(dir.resolve("services.yaml"), sb);
            exec("ip", "netns", "add", other);
            long t0 = System.nanoTime();
            int code = Main.execute("run", "--manifests", dir.toString(), "--netns", other, "--once",
                    "--hostname-override", "node-a", "--cluster-cidr", "10.128.0.0/9", "--service-cidr", "10.96.0.0/12",
                    "--node-ip", "192.168.50.2");
            long took = System.nanoTime() - t0;
            System.out.printf("          run --manifests (%.1f MB of YAML) --once: %.0f ms, exit %d%n",
                    sb.length() / 1e6, took / 1e6, code);
        } finally {
            exec("ip", "netns", "del", other);
            try (var s = Files.walk(dir)) {
                s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /**
     * kube-proxy's nftables-mode layout for the same services, as nft text: a service map, a chain
     * per service whose anonymous numgen vmap jumps to a chain per endpoint. Loaded with nft -f.
     */
    static String kubeProxyLayout(ProxyState state) {
        StringBuilder sb = new StringBuilder("table ip kube-proxy-layout {\n");
        sb.append("\tchain mark-for-masquerade {\n\t\tmeta mark set meta mark | 0x4000\n\t}\n");
        StringBuilder map = new StringBuilder();
        for (ServicePort svc : state.services().values()) {
            String name = "service-" + svc.id().namespace() + "/" + svc.id().name() + "/tcp/" + svc.id().port();
            String ip = svc.clusterIPs().get(0).getHostAddress();
            List<Endpoint> eps = state.endpointsOf(svc.id());
            sb.append("\tchain ").append(name).append(" {\n\t\tip daddr ").append(ip).append(" tcp dport ")
                    .append(svc.port()).append(" ip saddr != 10.128.0.0/9 jump mark-for-masquerade\n");
            sb.append("\t\tnumgen random mod ").append(eps.size()).append(" vmap { ");
            for (int i = 0; i < eps.size(); i++) {
                sb.append(i == 0 ? "" : ", ").append(i).append(" : goto endpoint-").append(name.substring(8)).append("__")
                        .append(eps.get(i).address().getHostAddress());
            }
            sb.append(" }\n\t}\n");
            for (Endpoint e : eps) {
                String ea = e.address().getHostAddress();
                sb.append("\tchain endpoint-").append(name.substring(8)).append("__").append(ea).append(" {\n\t\tip saddr ")
                        .append(ea).append(" jump mark-for-masquerade\n\t\tmeta l4proto tcp dnat to ").append(ea)
                        .append(":").append(e.port()).append("\n\t}\n");
            }
            map.append(map.length() == 0 ? "" : ", ").append(ip).append(" . tcp . ").append(svc.port()).append(" : goto ")
                    .append(name);
        }
        sb.append("\tmap service-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n\t\telements = { ")
                .append(map).append(" }\n\t}\n");
        sb.append("\tchain nat-prerouting {\n\t\ttype nat hook prerouting priority -100; policy accept;\n"
                + "\t\tip daddr . meta l4proto . th dport vmap @service-ips\n\t}\n}\n");
        return sb.toString();
    }

    private void compare(ProxyState state, String ours, long oursNanos) throws Exception {
        Path script = Files.createTempFile("nftproxy-bench", ".nft");
        String other = ours + "-kp";
        try {
            Files.writeString(script, kubeProxyLayout(state));
            exec("ip", "netns", "add", other);
            long t0 = System.nanoTime();
            exec("ip", "netns", "exec", other, "nft", "-f", script.toString());
            long nftNanos = System.nanoTime() - t0;
            System.out.printf("          kube-proxy nftables layout via nft -f: %.0f ms; nftproxy full sync: %.0f ms;"
                    + " ratio %.1fx%n", nftNanos / 1e6, oursNanos / 1e6, (double) nftNanos / oursNanos);
        } finally {
            Files.deleteIfExists(script);
            exec("ip", "netns", "del", other);
        }
    }

    private static void exec(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.MINUTES) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out.trim());
        }
    }
}
