package io.nftproxy.proxy.cli;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryUsage;
import java.util.concurrent.atomic.AtomicBoolean;

import com.sun.management.HotSpotDiagnosticMXBean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncListener;
import io.nftproxy.proxy.sync.SyncResult;

/**
 * The daemon's heap collected once, after its first full sync, so that the collector gives back
 * what the start needed and the steady state does not: the whole listing decoded, the first
 * ruleset built and encoded. The collectors the launcher names for a daemon (the serial one) give
 * memory back only when they collect the whole heap, which a daemon at rest may never do again;
 * kube-proxy's Go runtime returns its free memory by itself. Measured as the DaemonSet runs it
 * (bench --footprint, docs/benchmarks.md): at 10,000 services the heap held 200 MB committed
 * for 84 MB live after the start.
 *
 * <p>And, when the launcher asks for it ({@value #SETTLED_FREE_RATIO}: "MIN,MAX", the collector's
 * Min/MaxHeapFreeRatio once the start is over), a small heap is then held tighter: the ratios are
 * flags the JVM lets a running process change, set only for a live heap of at most {@value
 * #SETTLE_BELOW_MB} MB (a larger one gains little and would pay more full collections of a larger
 * live set), then collected once more to give back what they free. Measured as the DaemonSet
 * runs it, at 1,000 services: 114-116 -> 107 MB (docs/benchmarks.md).
 */
final class StartHeapRelease implements SyncListener {
    private static final Logger LOG = LoggerFactory.getLogger(StartHeapRelease.class);
    /** The system property the launcher sets: "MIN,MAX" free ratios (percent) for the settled heap. */
    static final String SETTLED_FREE_RATIO = "nftproxy.heap.settledFreeRatio";
    /** Live heap (MB, after the first full collection) up to which the settled ratios are taken. */
    static final int SETTLE_BELOW_MB = 32;
    private final AtomicBoolean done = new AtomicBoolean();
    private final int settleBelowMb;

    StartHeapRelease() {
        this(SETTLE_BELOW_MB);
    }

    /** With another bound on the live heap the settled ratios are taken for (a test's JVM holds more than a daemon's). */
    StartHeapRelease(int settleBelowMb) {
        this.settleBelowMb = settleBelowMb;
    }

    @Override
    public void synced(SyncResult result, long durationNanos, ObjectStore.Snapshot snapshot) {
        if (!result.full() || !done.compareAndSet(false, true)) {
            return;
        }
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long before = memory.getHeapMemoryUsage().getCommitted();
        long t0 = System.nanoTime();
        System.gc();
        long millis = (System.nanoTime() - t0) / 1_000_000;
        MemoryUsage after = memory.getHeapMemoryUsage();
        LOG.info("heap after the first sync: {} MB in use of {} MB committed ({} MB before one full collection of {} ms)",
                mb(after.getUsed()), mb(after.getCommitted()), mb(before), millis);
        String settled = System.getProperty(SETTLED_FREE_RATIO);
        if (settled != null && mb(after.getUsed()) <= settleBelowMb) {
            settle(settled, memory);
        }
    }

    /** Sets the settled free ratios ("MIN,MAX") and collects once more; a value the JVM refuses is logged and left. */
    private static void settle(String ratios, MemoryMXBean memory) {
        String[] mm = ratios.split(",");
        try {
            HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            // The minimum first: the JVM refuses a maximum below the minimum in force.
            hotspot.setVMOption("MinHeapFreeRatio", mm[0].trim());
            hotspot.setVMOption("MaxHeapFreeRatio", mm[1].trim());
        } catch (RuntimeException e) {
            LOG.warn("could not set the settled heap's free ratios {}: {}", ratios, e.getMessage());
            return;
        }
        System.gc();
        MemoryUsage now = memory.getHeapMemoryUsage();
        LOG.info("heap settled at {} MB committed for {} MB in use (free ratios {} %)", mb(now.getCommitted()),
                mb(now.getUsed()), ratios);
    }

    private static long mb(long bytes) {
        return (bytes + (1 << 19)) >> 20;
    }
}
