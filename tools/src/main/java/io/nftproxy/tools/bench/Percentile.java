package io.nftproxy.tools.bench;

/**
 * Percentiles of timed samples by nearest rank: the q-th percentile of n sorted samples is the
 * ⌈q·n⌉-th smallest. So the p99 of 100 samples is the second largest, not the largest: one
 * sample in a hundred may lie above it, which is what a 99th percentile says. (The bench took
 * the ⌊q·n⌋+1-th before, which made every p99 of 100 samples their maximum.) The maximum is
 * reported beside it, as q = 1.
 */
public final class Percentile {
    private Percentile() {
    }

    /** The nearest-rank {@code q}-percentile (0 < q ≤ 1) of {@code sorted}, in its unit; 0 for no samples. */
    public static long of(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        if (!(q > 0 && q <= 1)) {
            throw new IllegalArgumentException("a percentile between 0 (excluded) and 1: " + q);
        }
        // Rounded down first at 1e-9, so that 0.07 * 100 is rank 7 and not 8 (its double is 7.000000000000001).
        int rank = (int) Math.ceil(Math.floor(q * sorted.length * 1e9) / 1e9);
        return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
    }

    /** {@link #of} of nanoseconds, in milliseconds. */
    public static double ms(long[] sortedNanos, double q) {
        return of(sortedNanos, q) / 1e6;
    }
}
