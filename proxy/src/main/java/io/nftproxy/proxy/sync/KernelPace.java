package io.nftproxy.proxy.sync;

/**
 * How many objects the next transaction of a first sync or a rebuild may hold, from what the
 * kernel took for the last ones. nf_tables commits one transaction at a time in a network
 * namespace, so a neighbour there (a CNI plugin adding a pod, another table's owner) waits for
 * the whole of ours: a fixed count of objects is a fixed wait only on the machine it was measured
 * on. Each transaction's kernel time per object gives the next one's size for {@link #TARGET_NANOS};
 * it shrinks at once when the kernel is slower and grows by half at most when it is faster, never
 * past the configured count (the count these machines were measured with) nor under a sixteenth
 * of it (each transaction also costs a fixed round trip).
 */
final class KernelPace {
    /** The kernel time one of our transactions may hold a namespace's neighbours for. */
    static final long TARGET_NANOS = 20_000_000L;

    private final int most;
    private final int least;
    private int limit;

    /** @param configured the objects a transaction holds at most (and at first) */
    KernelPace(int configured) {
        this.most = Math.max(1, configured);
        this.least = Math.max(1, configured / 16);
        this.limit = most;
    }

    /** The objects the next transaction may hold. */
    int limit() {
        return limit;
    }

    /** A transaction of {@code weight} objects took the kernel {@code kernelNanos}. */
    void observe(int weight, long kernelNanos) {
        if (weight <= 0 || kernelNanos <= 0) {
            return; // nothing to learn from (a batch of the globals, or a commit the kernel did not time)
        }
        double fits = (double) TARGET_NANOS * weight / kernelNanos;
        int next = (int) Math.min(fits, limit * 1.5);
        limit = Math.max(least, Math.min(most, next));
    }
}
