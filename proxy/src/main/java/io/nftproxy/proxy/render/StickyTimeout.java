package io.nftproxy.proxy.render;

import java.util.Comparator;

/**
 * An affinity timeout some sticky port of the state has, on the cluster trees or on the local
 * trees (external traffic of policy Local): the globals hold its set of frontends and the rules
 * that remember clients for that long ({@link StickyPick}), and the sticky chains of a kind of
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

    @Override
    public int compareTo(StickyTimeout o) {
        return ORDER.compare(this, o);
    }
}
