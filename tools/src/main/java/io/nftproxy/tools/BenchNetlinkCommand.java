package io.nftproxy.tools;

import static io.nftproxy.netlink.nft.NfTablesUapi.NFT_REG_1;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.wire.NftCodec;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Cmp;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.netlink.nft.expr.Nat;
import io.nftproxy.netlink.nft.expr.Payload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The netlink library alone: encode throughput, and commit time of rules and of elements. */
@Command(name = "bench-netlink", mixinStandardHelpOptions = true,
        description = "Measure encoding and committing N rules / N set elements in fresh namespaces (needs root).")
final class BenchNetlinkCommand implements Callable<Integer> {
    @Option(names = "--sizes", split = ",", defaultValue = "10000,100000,300000", description = "Object counts (default: ${DEFAULT-VALUE}).")
    List<Integer> sizes;

    static Transaction rules(int n) {
        Transaction tx = new Transaction().add(new Table(Family.IP, "bench"));
        int perChain = 100;
        for (int c = 0; c * perChain < n; c++) {
            tx.add(Chain.regular(Family.IP, "bench", "c" + c));
        }
        for (int i = 0; i < n; i++) {
            tx.add(Rule.of(Family.IP, "bench", "c" + (i / perChain), List.of(
                    Payload.network(NFT_REG_1, 16, 4), Cmp.eq(NFT_REG_1, Bytes.be32(0x0a000000 + i)),
                    Immediate.value(NFT_REG_1, Bytes.be32(0x0b000000 + i)), Immediate.value(2, Bytes.be16(8080)),
                    Nat.dnat(Family.IP.code(), NFT_REG_1, 2))));
        }
        return tx;
    }

    static Transaction elements(int n) {
        NftSet m = NftSet.map(Family.IP, "bench", "m", DataType.VERDICT, DataType.IPV4_ADDR, DataType.INET_PROTO,
                DataType.INET_SERVICE);
        List<SetElement> els = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            els.add(SetElement.of(Bytes.concat(Bytes.be32(0x0a000000 + i), Bytes.u8(6).padTo4(), Bytes.be16(80).padTo4()),
                    Verdict.ACCEPT));
        }
        return new Transaction().add(new Table(Family.IP, "bench")).add(m).add(Elements.of(m, els));
    }

    @Option(names = "--counters", description = "Instead: read the counters of a counting map of each size, by dump and by key,"
            + " side by side (three times each; the figures are the last).")
    boolean counters;

    /** A verdict map of {@code n} elements that count, as --service-counters declares them; its keys. */
    static List<Bytes> countingKeys(int n) {
        List<Bytes> keys = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            keys.add(Bytes.concat(Bytes.be32(0x0a000000 + i), Bytes.u8(6).padTo4(), Bytes.be16(80).padTo4()));
        }
        return keys;
    }

    private int readCounters() throws Exception {
        System.out.printf("%-9s %12s %12s %8s%n", "elements", "dump_ms", "by_key_ms", "ratio");
        for (int n : sizes) {
            List<Bytes> keys = countingKeys(n);
            NftSet m = NftSet.map(Family.IP, "bench", "m", DataType.VERDICT, DataType.IPV4_ADDR, DataType.INET_PROTO,
                    DataType.INET_SERVICE).withCounter(true);
            List<SetElement> els = new ArrayList<>(n);
            keys.forEach(k -> els.add(SetElement.of(k, Verdict.ACCEPT)));
            String ns = "nftproxy-benchnl-" + ProcessHandle.current().pid();
            new ProcessBuilder("ip", "netns", "add", ns).inheritIO().start().waitFor();
            try (NftClient c = NftClient.open(NetNamespace.named(ns))) {
                c.commit(new Transaction().add(new Table(Family.IP, "bench")).add(m).add(Elements.of(m, els)));
                long dump = 0;
                long byKey = 0;
                for (int round = 0; round < 3; round++) {
                    long t0 = System.nanoTime();
                    int a = c.countedElements(Family.IP, "bench", "m").size();
                    long t1 = System.nanoTime();
                    int b = c.countedElements(Family.IP, "bench", "m", keys).size();
                    long t2 = System.nanoTime();
                    if (a != n || b != n) {
                        throw new IllegalStateException("read " + a + " and " + b + " of " + n + " elements");
                    }
                    dump = t1 - t0;
                    byKey = t2 - t1;
                }
                System.out.printf("%-9d %12.1f %12.1f %8.1f%n", n, dump / 1e6, byKey / 1e6, (double) dump / byKey);
            } finally {
                new ProcessBuilder("ip", "netns", "del", ns).inheritIO().start().waitFor();
            }
        }
        return 0;
    }

    @Override
    public Integer call() throws Exception {
        if (counters) {
            return readCounters();
        }
        System.out.printf("%-9s %-9s %12s %10s %10s %10s %12s%n", "kind", "objects", "enc_objs/s", "messages",
                "user_ms", "kernel_ms", "MB");
        for (int n : sizes) {
            for (String kind : List.of("rules", "elements")) {
                Transaction tx = kind.equals("rules") ? rules(n) : elements(n);
                // Encode throughput, warm: encode the batch three times, time the last.
                long encNanos = 0;
                int msgs = 0;
                for (int round = 0; round < 3; round++) {
                    MessageWriter w = new MessageWriter(1 << 20);
                    int[] seq = {0};
                    long t0 = System.nanoTime();
                    for (Op op : tx.ops()) {
                        NftCodec.encode(w, op, () -> seq[0]++, 0);
                    }
                    encNanos = System.nanoTime() - t0;
                    msgs = seq[0];
                }
                String ns = "nftproxy-benchnl-" + ProcessHandle.current().pid();
                new ProcessBuilder("ip", "netns", "add", ns).inheritIO().start().waitFor();
                try (NftClient c = NftClient.open(NetNamespace.named(ns))) {
                    CommitStats st = c.commit(tx);
                    System.out.printf("%-9s %-9d %12.0f %10d %10.0f %10.0f %12.1f%n", kind, n, n / (encNanos / 1e9),
                            st.messages(), st.encodeNanos() / 1e6, st.kernelNanos() / 1e6, st.bytes() / 1e6);
                } finally {
                    new ProcessBuilder("ip", "netns", "del", ns).inheritIO().start().waitFor();
                }
            }
        }
        return 0;
    }
}
