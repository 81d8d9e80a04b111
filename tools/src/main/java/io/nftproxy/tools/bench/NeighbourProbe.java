package io.nftproxy.tools.bench;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
 * Another nftables user on the node (a CNI plugin, firewalld, another pod's table): a process of
 * its own, with its own netlink socket, that adds one element to a set in a table of its own,
 * commits, removes it, commits, every {@link #PACE_NANOS} (a pace that leaves the CPUs to us),
 * and reports when each commit started and how long it took.
 * nf_tables serialises every batch under one netlink mutex for all network namespaces, so what
 * it waits for is what our transactions make everyone wait for. A process, not a thread of the
 * bench: a thread's timings would include the bench JVM's garbage-collection pauses (a thread
 * back from a system call waits for the pause to end), which perf showed at the longest waits.
 * Its clock is the bench's: System.nanoTime is CLOCK_MONOTONIC in every JVM on Linux.
 */
public final class NeighbourProbe implements AutoCloseable {
    /** From the start of one commit to the start of the next, unless the commit takes longer. */
    static final long PACE_NANOS = 5_000_000;
    private final Process process;
    private final Thread reader;
    /** Start and duration in nanoseconds of each commit, as the probe reports them. */
    private final List<long[]> commits = new ArrayList<>();
    private volatile String failure;

    /** Starts a probe process in network namespace {@code ns}, in table "inet neighbour" there. */
    public NeighbourProbe(String ns, String label) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        process = new ProcessBuilder(java, "-Xmx32m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                NeighbourProbe.class.getName(), ns).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.US_ASCII));
        String first = out.readLine();
        if (!"ready".equals(first)) {
            process.destroyForcibly();
            throw new IOException("the neighbour probe in " + ns + " did not start: " + first);
        }
        reader = new Thread(() -> read(out), "neighbour-" + label);
        reader.setDaemon(true);
        reader.start();
    }

    private void read(BufferedReader out) {
        try {
            for (String line; (line = out.readLine()) != null; ) {
                String[] f = line.split(" ");
                if (f.length == 2) {
                    synchronized (commits) {
                        commits.add(new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])});
                    }
                } else {
                    failure = line;
                }
            }
        } catch (IOException | RuntimeException e) {
            failure = e.toString();
        }
    }

    /** The probe process: args[0] is the network namespace. Prints "ready", then "start took" per commit. */
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.US_ASCII);
        try (NftClient client = NftClient.open(NetNamespace.named(args[0]))) {
            Table table = new Table(Family.INET, "neighbour");
            NftSet set = NftSet.set(Family.INET, "neighbour", "probe", DataType.IPV4_ADDR);
            client.commit(new Transaction().add(table).add(set));
            out.println("ready");
            out.flush();
            SetElement el = SetElement.of(Bytes.ip(Inet.parse("192.0.2.1")));
            for (boolean add = true; !out.checkError(); add = !add) {
                Transaction tx = add ? new Transaction().add(Elements.of(set, List.of(el)))
                        : new Transaction().delete(Elements.of(set, List.of(el)));
                long t0 = System.nanoTime();
                client.commit(tx);
                long took = System.nanoTime() - t0;
                out.println(t0 + " " + took);
                out.flush();
                LockSupport.parkNanos(PACE_NANOS - took);
            }
        } catch (Exception e) {
            out.println("failed: " + e.getMessage());
            out.flush();
        }
    }

    /** What the commits that overlapped [from, to] (System.nanoTime) took: sorted nanoseconds. */
    public long[] during(long from, long to) {
        if (failure != null) {
            throw new IllegalStateException("the neighbour's commits failed: " + failure);
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
        return String.format("p50 %.1f ms, max %.1f ms (%d commits)", Percentile.ms(a, 0.5), Percentile.ms(a, 1), a.length);
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
        reader.join(10_000);
    }
}
