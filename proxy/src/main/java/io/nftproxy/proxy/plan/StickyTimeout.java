package io.nftproxy.proxy.plan;

import java.util.Comparator;
import java.util.List;

import io.nftproxy.proxy.model.ServicePort;

/**
 * An affinity timeout some sticky port of the state has, on the cluster trees or on the local
 * trees (external traffic of policy Local): the globals hold its set of frontends and the rules
 * that remember clients for that long (render.StickyPick), and the sticky chains of a kind of
 * tree only while some timeout is in use on it (the local trees' only for ports that are both
 * sticky and of policy Local).
 *
 * @param seconds the ClientIP affinity timeout
 * @param local   the local trees' chains rather than the cluster trees'
 */
public record StickyTimeout(long seconds, boolean local) implements Comparable<StickyTimeout> {
    private static final Comparator<StickyTimeout> ORDER =
            Comparator.comparing(StickyTimeout::local).thenComparingLong(StickyTimeout::seconds);

    public StickyTimeout {
        if (seconds <= 0) {
            throw new IllegalArgumentException("an affinity timeout is positive: " + seconds);
        }
    }

    /**
     * The timeouts a service port's clients are remembered with: its affinity's on the cluster
     * trees, and on the local trees too when its external traffic is of policy Local (that
     * traffic picks among this node's endpoints and remembers the pick there). A function of the
     * port alone, not of its endpoints, so that a sync can keep count as ports come and go.
     */
    public static List<StickyTimeout> usedBy(ServicePort svc) {
        long seconds = svc.affinitySeconds();
        if (seconds == 0) {
            return List.of();
        }
        StickyTimeout cluster = new StickyTimeout(seconds, false);
        return svc.hasExternal() && svc.externalPolicyLocal()
                ? List.of(cluster, new StickyTimeout(seconds, true)) : List.of(cluster);
    }

    @Override
    public int compareTo(StickyTimeout o) {
        return ORDER.compare(this, o);
    }
}
