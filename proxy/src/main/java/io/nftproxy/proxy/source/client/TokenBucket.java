package io.nftproxy.proxy.source.client;

/**
 * kube-proxy's client-side request limit (clientConnection.qps and burst, or --kube-api-qps and
 * --kube-api-burst): client-go's token bucket. It holds up to {@code burst} tokens, refills at
 * {@code qps} a second and starts full; each request takes one, and when none is left it
 * reserves the next and waits for it, so requests go in the order they asked. A pure function
 * of the time it is given.
 */
public final class TokenBucket {
    private final double tokensPerNano;
    private final double burst;
    private double tokens;
    private long last;

    /**
     * @param qps   requests a second, more than 0
     * @param burst requests at once, at least 1
     */
    public TokenBucket(double qps, int burst, long nowNanos) {
        if (!(qps > 0) || burst < 1) {
            throw new IllegalArgumentException("a token bucket needs qps > 0 and burst >= 1, not " + qps + " and " + burst);
        }
        this.tokensPerNano = qps / 1e9;
        this.burst = burst;
        this.tokens = burst;
        this.last = nowNanos;
    }

    /** Takes a token at {@code nowNanos}: how long the request must wait for it (0: it goes now). */
    public synchronized long reserve(long nowNanos) {
        if (nowNanos > last) {
            tokens = Math.min(burst, tokens + (nowNanos - last) * tokensPerNano);
            last = nowNanos;
        }
        tokens -= 1;
        return tokens >= 0 ? 0 : (long) Math.ceil(-tokens / tokensPerNano);
    }
}
