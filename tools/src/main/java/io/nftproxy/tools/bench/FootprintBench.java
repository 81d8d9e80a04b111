package io.nftproxy.tools.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;

/**
 * What a node pays for nftproxy, as kube-proxy's DaemonSet runs it: the image (its size, and
 * gzipped as a registry sends it), the product jar, and the daemon in the image under podman with
 * the DaemonSet's memory limit and JVM options (read from deploy/nftproxy.yaml), on a node whose
 * API server at an address ({@link MockApiNode}) holds N services. Measured: the container's start
 * to the first {@code /healthz} 200; then, after the settling time (kube-proxy's figures are read
 * after its first sync too), the process's resident memory (anonymous and file-backed: the
 * class-data-sharing archive and the runtime are mapped files), its CPU over an idle window, what
 * the JVM serves on /metrics (heap used and committed, metaspace, code cache, threads), the JVM's
 * own account of its memory (Native Memory Tracking, summary: {@code -XX:NativeMemoryTracking}
 * added to the DaemonSet's options, read with the JDK's jcmd), and the kernel's slab grown since
 * before the start (our tables; the container's own kernel objects too).
 *
 * <p>fabric8's mock API server holds up to {@value #API_LIMIT} services in reasonable time (it
 * loads some hundred objects a second); past that the daemon reads a directory of manifests
 * mounted into the container ({@code nftproxy run --manifests}), as the daemon figures at 100k
 * in docs/benchmarks.md have always been taken.
 */
public final class FootprintBench {
    public static final int API_LIMIT = 10_000;
    /** Linux's USER_HZ, the unit of /proc/PID/stat's times. */
    private static final int CLOCK_TICKS = 100;
    private static final Duration DEADLINE = Duration.ofMinutes(5);
    private static final Pattern NMT = Pattern.compile("^-\\s+(.+?) \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)", Pattern.MULTILINE);
    private static final Pattern NMT_TOTAL = Pattern.compile("^Total: reserved=(\\d+)KB, committed=(\\d+)KB", Pattern.MULTILINE);

    /** This JDK's jcmd: the image's runtime has none, and attaches across the container's namespaces. */
    private static final String JCMD = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();

    private FootprintBench() {
    }

    /** How the DaemonSet runs the proxy's container: its memory limit and JAVA_TOOL_OPTIONS. */
    public record DaemonSet(String memoryLimit, String javaToolOptions) {
        /** Read from the deployment's manifests (the container named kube-proxy of the DaemonSet). */
        @SuppressWarnings("unchecked")
        public static DaemonSet of(Path manifests) throws IOException {
            for (Object doc : new Load(LoadSettings.builder().build()).loadAllFromString(Files.readString(manifests))) {
                if (!(doc instanceof Map<?, ?> m) || !"DaemonSet".equals(m.get("kind"))) {
                    continue;
                }
                Map<String, Object> pod = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) m.get("spec"))
                        .get("template")).get("spec");
                for (Map<String, Object> c : (List<Map<String, Object>>) pod.get("containers")) {
                    if (!"kube-proxy".equals(c.get("name"))) {
                        continue;
                    }
                    String opts = "";
                    for (Map<String, Object> e : (List<Map<String, Object>>) c.getOrDefault("env", List.of())) {
                        if ("JAVA_TOOL_OPTIONS".equals(e.get("name"))) {
                            opts = String.valueOf(e.get("value"));
                        }
                    }
                    Map<String, Object> limits = (Map<String, Object>) ((Map<String, Object>) c.getOrDefault("resources", Map.of()))
                            .getOrDefault("limits", Map.of());
                    String memory = String.valueOf(limits.getOrDefault("memory", ""));
                    // podman takes 1g where Kubernetes writes 1Gi.
                    return new DaemonSet(memory.replaceAll("([KMGT])i$", "$1").toLowerCase(), opts);
                }
            }
            throw new IOException(manifests + " has no DaemonSet with a container named kube-proxy");
        }
    }

    /** What one size measured; sizes in bytes, -1 where a figure could not be read. */
    public record Figures(int services, String source, long startNanos, long rss, long rssAnon, long rssFile, long heapUsed,
                          long heapCommitted, long metaspace, long codeCache, int threads, double idleCpuPercent, long slab,
                          Map<String, Long> nmtCommitted, long nmtTotal, Map<String, Long> rssByMapping, Map<String, Integer> threadsByName,
                          LiveHeap live) {
    }

    /**
     * The daemon in {@code image} holding {@code state}: started as the DaemonSet starts it,
     * measured {@code settle} after its first sync, its CPU over {@code idle}.
     */
    public static Figures run(ProxyState state, String image, DaemonSet ds, Duration settle, Duration idle) throws Exception {
        int n = state.services().size();
        boolean viaApi = n <= API_LIMIT;
        try (MockApiNode node = MockApiNode.start()) {
            String name = "nftproxy-footprint-" + ProcessHandle.current().pid();
            List<String> extra = new ArrayList<>(List.of("--memory", ds.memoryLimit(), "-e",
                    "JAVA_TOOL_OPTIONS=" + ds.javaToolOptions() + " -XX:NativeMemoryTracking=summary"));
            List<String> args;
            if (viaApi) {
                args = List.of("--config=/var/lib/kube-proxy/config.conf", "--hostname-override=node-a");
            } else {
                Path manifests = Files.createDirectories(node.dir.resolve("manifests"));
                for (ServicePort svc : state.services().values()) {
                    DaemonBench.write(manifests, svc, state.endpointsOf(svc.id()));
                }
                extra.addAll(List.of("-v", manifests + ":/manifests:ro", "--entrypoint", "/usr/local/bin/nftproxy"));
                // conntrack left alone, as the configuration file of the API server's path leaves it (no
                // init container runs the privileged part; /proc/sys is read-only in the container).
                args = List.of("run", "--manifests", "/manifests", "--hostname-override", "node-a", "--node-ip",
                        MockApiNode.NODE_IP, "--conntrack-max-per-core", "0", "--conntrack-tcp-timeout-established", "0",
                        "--conntrack-tcp-timeout-close-wait", "0");
            }
            if (viaApi) {
                node.load(state);
            }
            // The kernel frees what a phase before deleted asynchronously: the figure before the start settles first.
            long slab0 = KernelMemory.settledSlabKb();
            try {
                MockApiNode.output("sync");
                long t0 = System.nanoTime();
                CompareBench.exec(node.podmanRun(name, image, extra, args).toArray(String[]::new));
                long start = node.untilHealthy(t0, DEADLINE, () -> MockApiNode.output("podman", "logs", name));
                Thread.sleep(settle.toMillis()); // the settling time the figures are defined at, not synchronisation
                long pid = Long.parseLong(MockApiNode.output("podman", "inspect", "-f", "{{.State.Pid}}", name).trim());
                long cpu0 = cpuTicks(pid);
                long w0 = System.nanoTime();
                Thread.sleep(idle.toMillis()); // the window idle CPU is measured over
                double cpuSeconds = (cpuTicks(pid) - cpu0) / (double) CLOCK_TICKS;
                double idleCpu = 100 * cpuSeconds / ((System.nanoTime() - w0) / 1e9);
                long rss = DaemonBench.status(pid, "VmRSS:");
                long anon = DaemonBench.status(pid, "RssAnon:");
                long file = DaemonBench.status(pid, "RssFile:") + DaemonBench.status(pid, "RssShmem:");
                Map<String, Long> byMapping = rssByMapping(pid);
                Map<String, Double> metrics = metrics(node.get(10249, "/metrics").body());
                String nmt = MockApiNode.output(JCMD, Long.toString(pid), "VM.native_memory", "summary");
                Map<String, Long> parts = new LinkedHashMap<>();
                Matcher m = NMT.matcher(nmt);
                while (m.find()) {
                    parts.put(m.group(1), Long.parseLong(m.group(3)) * 1024);
                }
                Matcher t = NMT_TOTAL.matcher(nmt);
                Map<String, Integer> threadsByName = threadsByName(pid);
                // Last: the histogram collects the whole heap first, so it counts only what is live,
                // and the figures above must be read before it changes them.
                LiveHeap live = LiveHeap.parse(MockApiNode.output(JCMD, Long.toString(pid), "GC.class_histogram"));
                long slab = (KernelMemory.settledSlabKb() - slab0) * 1024;
                return new Figures(n, viaApi ? "API server at an address" : "manifests directory", start, rss, anon, file,
                        metrics.getOrDefault("jvm_memory_bytes_used{area=\"heap\",}", -1.0).longValue(),
                        metrics.getOrDefault("jvm_memory_bytes_committed{area=\"heap\",}", -1.0).longValue(),
                        metrics.getOrDefault("jvm_memory_pool_bytes_used{pool=\"Metaspace\",}", -1.0).longValue(),
                        (long) metrics.entrySet().stream().filter(e -> e.getKey().startsWith("jvm_memory_pool_bytes_used{pool=\"CodeHeap"))
                                .mapToDouble(Map.Entry::getValue).sum(),
                        metrics.getOrDefault("jvm_threads_current", -1.0).intValue(), idleCpu, slab, parts,
                        t.find() ? Long.parseLong(t.group(2)) * 1024 : -1, byMapping, threadsByName, live);
            } finally {
                MockApiNode.output("podman", "--runtime", "runc", "rm", "-f", "-t", "5", name);
            }
        }
    }

    /**
     * Where the resident set is, by what is mapped: each file by its name (the JVM's library, the
     * class-data-sharing archive, the runtime's module image), anonymous memory as one (the Java
     * heap, metaspace, code cache, thread stacks and malloc's arenas all are), largest first.
     */
    static Map<String, Long> rssByMapping(long pid) throws IOException {
        Map<String, Long> out = new HashMap<>();
        String mapping = "";
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/smaps"))) {
            if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                String[] f = line.trim().split("\\s+", 6);
                mapping = f.length < 6 ? "anonymous" : f[5].startsWith("[") ? f[5] : Path.of(f[5]).getFileName().toString();
            } else if (line.startsWith("Rss:")) {
                out.merge(mapping, Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024, Long::sum);
            }
        }
        return largestFirst(out);
    }

    /**
     * The heap's live objects, as {@code jcmd PID GC.class_histogram} prints them (it collects the
     * whole heap first): their total and bytes by class, largest first.
     */
    public record LiveHeap(long total, Map<String, Long> byClass) {
        /** A histogram's row: {@code    1:   12345   678900  java.lang.String (java.base@17.0.15)}. */
        private static final Pattern ROW = Pattern.compile("^\\s*\\d+:\\s+\\d+\\s+(\\d+)\\s+(\\S+).*$");
        private static final Pattern SUM = Pattern.compile("^Total\\s+\\d+\\s+(\\d+)\\s*$");

        static LiveHeap parse(String histogram) {
            Map<String, Long> byClass = new LinkedHashMap<>();
            long total = -1;
            for (String line : histogram.split("\n")) {
                Matcher m = ROW.matcher(line);
                if (m.matches()) {
                    byClass.merge(m.group(2), Long.parseLong(m.group(1)), Long::sum);
                } else if ((m = SUM.matcher(line)).matches()) {
                    total = Long.parseLong(m.group(1));
                }
            }
            return new LiveHeap(total, byClass);
        }
    }

    /**
     * The process's threads by name, the numbers in a name left out ({@code pool-3-thread-1} is
     * {@code pool-#-thread-#}), most first: what a pool or a library starts shows as one line.
     */
    static Map<String, Integer> threadsByName(long pid) throws IOException {
        Map<String, Integer> out = new HashMap<>();
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : tasks.toList()) {
                try {
                    out.merge(Files.readString(task.resolve("comm")).strip().replaceAll("\\d+", "#"), 1, Integer::sum);
                } catch (IOException gone) {
                    // the thread ended while listed
                }
            }
        }
        return largestFirst(out);
    }

    /** The same entries, largest value first (equal ones by name). */
    private static <V extends Comparable<V>> Map<String, V> largestFirst(Map<String, V> m) {
        Map<String, V> sorted = new LinkedHashMap<>();
        m.entrySet().stream().sorted(Map.Entry.<String, V>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
                .forEach(e -> sorted.put(e.getKey(), e.getValue()));
        return sorted;
    }

    /** utime + stime of a process, in clock ticks ({@link #CLOCK_TICKS} a second). */
    private static long cpuTicks(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    /** Prometheus text: series (name and labels) to value. */
    static Map<String, Double> metrics(String text) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int sp = line.lastIndexOf(' ');
            if (line.isEmpty() || line.startsWith("#") || sp < 0) {
                continue;
            }
            try {
                out.put(line.substring(0, sp), Double.parseDouble(line.substring(sp + 1)));
            } catch (NumberFormatException e) {
                // not a sample line
            }
        }
        return out;
    }

    /** The image's size as podman counts it, and gzipped as {@code podman save} writes it. */
    public static long[] imageSize(String image) throws Exception {
        long raw = Long.parseLong(MockApiNode.output("podman", "image", "inspect", "--format", "{{.Size}}", image).trim());
        String gz = MockApiNode.output("bash", "-c", "podman save " + image + " 2>/dev/null | gzip -c | wc -c").trim();
        return new long[] {raw, Long.parseLong(gz)};
    }
}
