package io.nftproxy.proxy.render;

import java.util.Comparator;

/**
 * An affinity timeout whose shared sticky chains the table holds, on the cluster trees or on the
 * local trees (external traffic of policy Local). The globals declare exactly the ones the
 * services in the state use: each set of chains is some 1,000 chains and 3,000 rules per family,
 * and the local trees' are wanted only by ports that are both sticky and of policy Local.
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
