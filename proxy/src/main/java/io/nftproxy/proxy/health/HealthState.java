package io.nftproxy.proxy.health;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * The proxy's health as kube-proxy judges it: unhealthy once an update has waited longer than
 * the health timeout without a successful sync, or at once while our rules are known to be
 * missing from the kernel. A proxy that is starting (waiting for the API server, say) is alive:
 * /livez answers 200. /healthz also needs the first sync to have succeeded (a node is not ready
 * for service traffic before its rules are in), and this node's Node object to be known and not
 * being deleted.
 */
public final class HealthState {
    private final Clock clock;
    private final Duration timeout;
    private Instant lastUpdated;
    private Instant oldestPending;
    private boolean nodeDeleting;
    private boolean nodeMissing;
    private boolean rulesMissing;

    public HealthState(Clock clock, Duration timeout) {
        this.clock = clock;
        this.timeout = timeout;
    }

    /** A change arrived (only the oldest unsynced one counts). */
    public synchronized void queued() {
        if (oldestPending == null) {
            oldestPending = clock.instant();
        }
    }

    /** A sync succeeded: everything queued before it is in the kernel. */
    public synchronized void synced() {
        lastUpdated = clock.instant();
        oldestPending = null;
        rulesMissing = false;
    }

    /**
     * Someone else changed or removed our rules: unhealthy at once (not after the timeout), since
     * the node's traffic is not being handled as it should, until a sync puts them back.
     */
    public synchronized void rulesMissing() {
        rulesMissing = true;
        queued();
    }

    public synchronized void nodeDeleting(boolean deleting) {
        nodeDeleting = deleting;
    }

    /** The source has a Node object for this host and it has not been seen (yet, or any more). */
    public synchronized void nodeMissing(boolean missing) {
        nodeMissing = missing;
    }

    /** The answer to one probe. */
    public record Status(boolean healthy, boolean nodeEligible, Instant lastUpdated, Instant currentTime) {
        public boolean healthzOk() {
            return healthy && nodeEligible && lastUpdated != null;
        }
    }

    public synchronized Status status() {
        Instant now = clock.instant();
        boolean healthy = !rulesMissing && (oldestPending == null || !now.isAfter(oldestPending.plus(timeout)));
        return new Status(healthy, !nodeDeleting && !nodeMissing, lastUpdated, now);
    }
}
