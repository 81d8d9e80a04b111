package io.nftproxy.proxy.cli;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryUsage;
import java.util.concurrent.atomic.AtomicBoolean;

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
 */
final class StartHeapRelease implements SyncListener {
    private static final Logger LOG = LoggerFactory.getLogger(StartHeapRelease.class);
    private final AtomicBoolean done = new AtomicBoolean();

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
    }

    private static long mb(long bytes) {
        return (bytes + (1 << 19)) >> 20;
    }
}
