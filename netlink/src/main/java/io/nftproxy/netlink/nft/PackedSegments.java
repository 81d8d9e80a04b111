package io.nftproxy.netlink.nft;

import java.util.AbstractList;
import java.util.List;
import java.util.RandomAccess;

/**
 * Packed lists read as one, without copying their bytes: the elements a first sync adds to a set
 * are the fragments' own lists side by side, so the batch needs no second copy of them (at 100k
 * services the copy was hundreds of megabytes at the sync's peak). Immutable, as its parts are;
 * {@link #get} decodes an element when it is read.
 */
public final class PackedSegments extends AbstractList<SetElement> implements RandomAccess {
    private final PackedElements[] parts;
    /** Element i of the whole is in the part p with starts[p] <= i < starts[p + 1]. */
    private final int[] starts;

    private PackedSegments(PackedElements[] parts, int[] starts) {
        this.parts = parts;
        this.starts = starts;
    }

    /** The parts as one list: the only part itself when there is one, {@link PackedElements#EMPTY} when none. */
    public static List<SetElement> of(List<PackedElements> parts) {
        List<PackedElements> nonEmpty = parts.stream().filter(p -> !p.isEmpty()).toList();
        if (nonEmpty.isEmpty()) {
            return PackedElements.EMPTY;
        }
        if (nonEmpty.size() == 1) {
            return nonEmpty.get(0);
        }
        PackedElements[] ps = nonEmpty.toArray(new PackedElements[0]);
        int[] starts = new int[ps.length + 1];
        for (int p = 0; p < ps.length; p++) {
            starts[p + 1] = Math.addExact(starts[p], ps[p].size());
        }
        return new PackedSegments(ps, starts);
    }

    @Override
    public SetElement get(int i) {
        if (i < 0 || i >= size()) {
            throw new IndexOutOfBoundsException(i);
        }
        int lo = 0;
        int hi = parts.length - 1;
        while (lo < hi) { // the last part whose start is <= i
            int mid = (lo + hi + 1) >>> 1;
            if (starts[mid] <= i) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return parts[lo].get(i - starts[lo]);
    }

    @Override
    public int size() {
        return starts[parts.length];
    }
}
