package io.nftproxy.tools.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.nftproxy.proxy.render.TableNames;
import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.NftEvent;
import io.nftproxy.netlink.nft.monitor.NftMonitor;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * The daemon as an operator runs it: {@code nftproxy run --manifests DIR} in a JVM of its own with
 * a given maximum heap, over a watched directory of one file per service. Timed from the outside:
 * the first full sync from the daemon's log line, each replaced file to the kernel's event for the
 * new endpoint's element. Then the daemon's heap after a full GC ({@code jcmd}) and its resident
 * set. This is the figure that says whether a heap size holds N services, with nothing of the
 * bench's own in it.
 */
public final class ProcessDaemonBench {
    private static final Duration DEADLINE = Duration.ofMinutes(5);
    /** A generation's line of {@code jcmd GC.heap_info}, whichever the collector (G1 has one for the heap). */
    private static final Pattern HEAP_USED = Pattern.compile(
            "^\\s*(?:PSYoungGen|ParOldGen|garbage-first heap|def new generation|tenured generation)\\s+total \\d+K, used (\\d+)K",
            Pattern.MULTILINE);

    /** Start to first full sync, sorted change latencies, heap after GC (-1: unknown), RSS, peak RSS. */
    public record Figures(long startNanos, long[] latencies, long heapBytes, long rssBytes, long peakRssBytes) {
        public double p(double q) {
            return Percentile.ms(latencies, q);
        }
    }

    private ProcessDaemonBench() {
    }

    /**
     * @param launcher the command that starts the product (the launcher, told the heap limit), up to
     *                 its subcommand
     */
    public static Figures run(List<String> launcher, List<String> proxyFlags, ProxyState state, String netns, int changes)
            throws Exception {
        Path dir = Files.createTempDirectory("nftproxy-bench-process");
        List<ServicePort> svcs = new ArrayList<>(state.services().values());
        HashMap<ServicePortName, List<Endpoint>> eps = new HashMap<>(state.endpoints());
        Process p = null;
        try {
            for (ServicePort svc : svcs) {
                DaemonBench.write(dir, svc, eps.get(svc.id()));
            }
            List<String> cmd = new ArrayList<>(launcher);
            cmd.addAll(List.of("run", "--manifests", dir.toString(), "--netns", netns, "--min-sync-period", "0",
                    "--metrics-bind-address=", "--healthz-bind-address="));
            cmd.addAll(proxyFlags);
            exec("sync"); // 100,000 files just written: written back before the clock starts, not beside the daemon
            long t0 = System.nanoTime();
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            LogWatch log = new LogWatch(p);
            long start = log.awaitFullSync(t0, p) - t0;
            long[] lat = new long[changes];
            try (NftMonitor mon = NftMonitor.open(NetNamespace.named(netns))) {
                for (int c = 0; c < changes; c++) {
                    ServicePort svc = svcs.get((int) ((c * 7919L) % svcs.size()));
                    List<Endpoint> list = new ArrayList<>(eps.get(svc.id()));
                    Endpoint neu = Endpoint.ready(BenchState.ip(0x0d000000 + c), 8080, "node-x");
                    list.set(c % list.size(), neu);
                    eps.put(svc.id(), list);
                    long t = System.nanoTime();
                    DaemonBench.write(dir, svc, list);
                    lat[c] = awaitElement(mon, Bytes.ip(neu.address()), p, log) - t;
                }
            }
            Arrays.sort(lat);
            long heap = heapAfterGc(p.pid());
            long rss = DaemonBench.status(p.pid(), "VmRSS:");
            long peak = DaemonBench.status(p.pid(), "VmHWM:");
            if (!p.isAlive()) {
                throw new IllegalStateException("the daemon exited (" + p.exitValue() + "): " + log.tail());
            }
            return new Figures(start, lat, heap, rss, peak);
        } finally {
            if (p != null) {
                p.destroy();
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
            try (var s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    /** The time of the kernel's event adding an endpoint element whose data starts with {@code address}. */
    private static long awaitElement(NftMonitor mon, Bytes address, Process p, LogWatch log) throws Exception {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IllegalStateException("the daemon exited (" + p.exitValue() + "): " + log.tail());
            }
            NftEvent e = mon.next(Duration.ofMillis(200));
            if (e != null && e.type() == NftEvent.Type.ELEMENTS && !e.deleted() && TableNames.SERVICE_ENDPOINTS.equals(TableNames.endpointMapBase(e.name()))) {
                for (SetElement el : ((Elements) e.object()).elements()) {
                    if (el.data() instanceof Data.Value v && v.bytes().length() >= address.length()
                            && v.bytes().slice(0, address.length()).equals(address)) {
                        return System.nanoTime();
                    }
                }
            }
        }
        throw new TimeoutException("the kernel did not get endpoint " + address + " within " + DEADLINE);
    }

    /** The daemon's heap in use after a full collection, asked with jcmd; -1 when there is no jcmd. */
    private static long heapAfterGc(long pid) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        if (!Files.isExecutable(jcmd)) {
            return -1;
        }
        try {
            exec(jcmd.toString(), Long.toString(pid), "GC.run");
            Matcher m = HEAP_USED.matcher(exec(jcmd.toString(), Long.toString(pid), "GC.heap_info"));
            long used = -1;
            while (m.find()) {
                used = Math.max(used, 0) + Long.parseLong(m.group(1)) * 1024;
            }
            return used;
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static String exec(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }

    /** Reads the daemon's log as it comes: when the first full sync was logged, and the last lines for errors. */
    private static final class LogWatch {
        private final ArrayDeque<String> last = new ArrayDeque<>();
        private long fullSyncAt;

        LogWatch(Process p) {
            Thread t = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        synchronized (this) {
                            if (fullSyncAt == 0 && line.contains("full sync:")) {
                                fullSyncAt = System.nanoTime();
                                notifyAll();
                            }
                            last.addLast(line);
                            if (last.size() > 20) {
                                last.removeFirst();
                            }
                        }
                    }
                } catch (IOException e) {
                    // the process is gone; its exit is reported by whoever waits for it
                }
            }, "daemon-log");
            t.setDaemon(true);
            t.start();
        }

        synchronized long awaitFullSync(long since, Process p) throws InterruptedException, TimeoutException {
            long deadline = since + DEADLINE.toNanos();
            while (fullSyncAt == 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new TimeoutException("no full sync logged within " + DEADLINE + ": " + tail());
                }
                if (!p.isAlive()) {
                    throw new IllegalStateException("the daemon exited (" + p.exitValue() + ") before its first sync: " + tail());
                }
                wait(Math.max(1, Math.min(200, TimeUnit.NANOSECONDS.toMillis(left))));
            }
            return fullSyncAt;
        }

        synchronized String tail() {
            return String.join("\n", last);
        }
    }
}
