package io.nftproxy.tools.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;

/**
 * Another nftables user on the node (a CNI plugin, firewalld, another pod's table): on a netlink
 * socket and a thread of its own, it adds one element to a set in a table of its own, commits,
 * removes it, commits, every {@link #PACE_NANOS} (a pace that leaves the CPUs to us), and records
 * when each commit started and how long it took.
 * nf_tables serialises every batch under one netlink mutex for all network namespaces, so what
 * it waits for is what our transactions make everyone wait for. (A thread here, not a process:
 * the kernel sees a socket and a batch either way; a process would add its own start-up.)
 */
public final class NeighbourProbe implements AutoCloseable {
    /** From the start of one commit to the start of the next, unless the commit takes longer. */
    static final long PACE_NANOS = 5_000_000;
    private final NftClient client;
    private final Thread thread;
    private final NftSet set;
    private volatile boolean running = true;
    /** Start and duration in nanoseconds of each commit, appended by the probe's thread. */
    private final List<long[]> commits = new ArrayList<>();
    private volatile Exception failure;

    /** Starts probing in network namespace {@code ns}, in table "inet neighbour" there. */
    public NeighbourProbe(NetNamespace ns, String label) throws Exception {
        client = NftClient.open(ns);
        Table table = new Table(Family.INET, "neighbour");
        set = NftSet.set(Family.INET, "neighbour", "probe", DataType.IPV4_ADDR);
        client.commit(new Transaction().add(table).add(set));
        thread = new Thread(this::loop, "neighbour-" + label);
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        SetElement el = SetElement.of(Bytes.ip(Inet.parse("192.0.2.1")));
        try {
            for (boolean add = true; running; add = !add) {
                Transaction tx = add ? new Transaction().add(Elements.of(set, List.of(el)))
                        : new Transaction().delete(Elements.of(set, List.of(el)));
                long t0 = System.nanoTime();
                client.commit(tx);
                long took = System.nanoTime() - t0;
                synchronized (commits) {
                    commits.add(new long[] {t0, took});
                }
                LockSupport.parkNanos(PACE_NANOS - took);
            }
        } catch (Exception e) {
            failure = e;
        }
    }

    /** What the commits that overlapped [from, to] (System.nanoTime) took: sorted nanoseconds. */
    public long[] during(long from, long to) {
        if (failure != null) {
            throw new IllegalStateException("the neighbour's commits failed: " + failure.getMessage(), failure);
        }
        List<Long> out = new ArrayList<>();
        synchronized (commits) {
            for (long[] c : commits) {
                if (c[0] <= to && c[0] + c[1] >= from) {
                    out.add(c[1]);
                }
            }
        }
        long[] a = out.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(a);
        return a;
    }

    /** "p50 X ms, max Y ms (n commits)" of the commits that overlapped [from, to]. */
    public String summary(long from, long to) {
        long[] a = during(from, to);
        if (a.length == 0) {
            return "no commit";
        }
        return String.format("p50 %.1f ms, max %.1f ms (%d commits)", a[a.length / 2] / 1e6, a[a.length - 1] / 1e6, a.length);
    }

    @Override
    public void close() throws Exception {
        running = false;
        thread.join(10_000);
        client.close();
    }
}
