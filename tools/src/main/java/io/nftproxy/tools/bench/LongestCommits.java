package io.nftproxy.tools.bench;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Transaction;

/**
 * Our transactions' times in the kernel, and what the longest held: to tell which kind of
 * transaction keeps another nftables user waiting (elements into or out of which set, rules,
 * chains). Fed from the committing thread, read after the sync.
 */
public final class LongestCommits {
    private final int keep;
    private final List<Commit> longest = new ArrayList<>();
    private long count;
    private long maxNanos;

    /** One transaction: its time in the kernel and what it held. */
    public record Commit(long kernelNanos, String what) {
    }

    public LongestCommits(int keep) {
        this.keep = keep;
    }

    /** Records one transaction the kernel took in {@code kernelNanos}; its summary is made only if it is among the longest. */
    public synchronized void add(Transaction tx, long kernelNanos) {
        count++;
        maxNanos = Math.max(maxNanos, kernelNanos);
        if (longest.size() == keep && longest.get(keep - 1).kernelNanos() >= kernelNanos) {
            return;
        }
        longest.add(new Commit(kernelNanos, summary(tx)));
        longest.sort(Comparator.comparingLong(Commit::kernelNanos).reversed());
        if (longest.size() > keep) {
            longest.remove(keep);
        }
    }

    public synchronized long count() {
        return count;
    }

    public synchronized long maxNanos() {
        return maxNanos;
    }

    /** "41 ms: add 4096 elements to hairpin.g1; ..." for the longest, longest first. */
    public synchronized String describe() {
        return longest.stream().map(c -> String.format("%.0f ms: %s", c.kernelNanos() / 1e6, c.what()))
                .collect(Collectors.joining("; "));
    }

    /**
     * What a transaction holds, grouped: elements per verb and set, other objects per verb and
     * kind, largest groups first, at most three.
     */
    static String summary(Transaction tx) {
        Map<String, Integer> groups = new LinkedHashMap<>();
        for (Op op : tx.ops()) {
            String verb = op.verb().name().toLowerCase();
            if (op.object() instanceof Elements e) {
                groups.merge(verb + " elements of " + e.set(), e.elements().size(), Integer::sum);
            } else {
                groups.merge(verb + " " + op.object().getClass().getSimpleName().toLowerCase(), 1, Integer::sum);
            }
        }
        List<Map.Entry<String, Integer>> sorted = new ArrayList<>(groups.entrySet());
        sorted.sort(Map.Entry.<String, Integer>comparingByValue().reversed());
        String top = sorted.stream().limit(3).map(g -> g.getValue() + " × " + g.getKey()).collect(Collectors.joining(", "));
        return sorted.size() > 3 ? top + ", and " + (sorted.size() - 3) + " more kinds" : top;
    }
}
