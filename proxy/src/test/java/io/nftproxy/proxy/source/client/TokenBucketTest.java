package io.nftproxy.proxy.source.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** client-go's token bucket, in virtual time: a burst at once, then one request every 1/qps seconds. */
class TokenBucketTest {
    static final long MS = 1_000_000;

    /** The waits of requests asked at the given times (ms). */
    static List<Long> waits(double qps, int burst, long... atMs) {
        TokenBucket b = new TokenBucket(qps, burst, 0);
        List<Long> out = new ArrayList<>();
        for (long t : atMs) {
            out.add(b.reserve(t * MS) / MS);
        }
        return out;
    }

    @Test
    void aBurstGoesAtOnceAndTheRestOneEveryTokenInTheOrderAsked() {
        // kube-proxy's defaults: 5 a second, 10 at once
        assertEquals(List.of(0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 200L, 400L, 600L),
                waits(5, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    }

    @Test
    void tokensComeBackWithTimeUpToTheBurst() {
        assertEquals(List.of(0L, 0L, 500L), waits(2, 2, 0, 0, 0));
        assertEquals(List.of(0L, 0L, 0L, 0L, 500L), waits(2, 2, 0, 0, 10_000, 10_000, 10_000),
                "ten seconds later: two tokens again, not twenty");
        assertEquals(List.of(0L, 0L, 0L, 500L), waits(2, 2, 0, 0, 500, 500), "half a second at 2 a second: one token back");
    }

    @Test
    void itNeedsARateAndRoomForOne() {
        assertThrows(IllegalArgumentException.class, () -> new TokenBucket(0, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> new TokenBucket(5, 0, 0));
    }
}
