package io.nftproxy.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.stream.LongStream;

import org.junit.jupiter.api.Test;

/** Percentiles by nearest rank: the q-th of n sorted samples is the ⌈q·n⌉-th smallest. */
class PercentileTest {
    private static final long[] HUNDRED = LongStream.rangeClosed(1, 100).toArray(); // 1 … 100

    @Test
    void theP99OfAHundredIsTheSecondLargestAndTheMaximumIsTheLargest() {
        assertEquals(99, Percentile.of(HUNDRED, 0.99));
        assertEquals(100, Percentile.of(HUNDRED, 1));
        assertEquals(50, Percentile.of(HUNDRED, 0.5));
        assertEquals(90, Percentile.of(HUNDRED, 0.9));
        assertEquals(7, Percentile.of(HUNDRED, 0.07), "0.07 × 100 in doubles is a hair above 7: still rank 7");
        assertEquals(1, Percentile.of(HUNDRED, 0.001));
    }

    @Test
    void fewSamplesRoundUpAndNoneGiveZero() {
        long[] three = {10, 20, 30};
        assertEquals(20, Percentile.of(three, 0.5));
        assertEquals(30, Percentile.of(three, 0.9));
        assertEquals(30, Percentile.of(three, 0.99));
        assertEquals(10, Percentile.of(new long[] {10}, 0.5));
        assertEquals(0, Percentile.of(new long[0], 0.99));
        assertEquals(0.02, Percentile.ms(new long[] {20_000}, 1), 1e-12);
    }

    @Test
    void aPercentileOutsideZeroToOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Percentile.of(HUNDRED, 0));
        assertThrows(IllegalArgumentException.class, () -> Percentile.of(HUNDRED, 99));
    }
}
