package io.nftproxy.proxy.sync;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.SetElement;

/**
 * A change to an interval set, as whole ranges. The kernel checks every interval element against
 * the elements in the set at the moment it arrives (two starts or two ends in a row read as an
 * overlap, net/netfilter/nft_set_rbtree.c), so a change sent element by element can be refused
 * although its end state is sound: deleting the start of one range and adding a new range below
 * its end leaves two ends in a row midway. Deleting every range that changes, whole, leaves only
 * sound ranges; adding each new range start first then never meets an overlap.
 */
final class IntervalRanges {
    private IntervalRanges() {
    }

    /** The elements to delete and to add, the additions in key order, each range's start before its end. */
    record Change(List<SetElement> removes, List<SetElement> adds) {
    }

    /**
     * @param before  the set's elements now, in any order
     * @param changed the keys that change: to their new element, or to null when they go
     */
    static Change of(List<SetElement> before, Map<Bytes, SetElement> changed) {
        Map<Bytes, SetElement> after = new HashMap<>();
        for (SetElement e : before) {
            after.put(e.key(), e);
        }
        changed.forEach((k, e) -> {
            if (e == null) {
                after.remove(k);
            } else {
                after.put(k, e);
            }
        });
        Set<List<SetElement>> was = ranges(before);
        Set<List<SetElement>> now = ranges(new ArrayList<>(after.values()));
        List<SetElement> removes = new ArrayList<>();
        for (List<SetElement> r : was) {
            if (!now.contains(r)) {
                removes.addAll(r);
            }
        }
        List<SetElement> adds = new ArrayList<>();
        for (List<SetElement> r : now) {
            if (!was.contains(r)) {
                adds.addAll(r);
            }
        }
        return new Change(removes, adds);
    }

    /** Each start with the end that follows it (none for a range that runs to the top of the space), in key order. */
    static Set<List<SetElement>> ranges(List<SetElement> elements) {
        List<SetElement> sorted = new ArrayList<>(elements);
        sorted.sort(SetElement.INTERVAL_ORDER);
        Set<List<SetElement>> out = new LinkedHashSet<>();
        for (int i = 0; i < sorted.size(); i++) {
            SetElement start = sorted.get(i);
            if (start.isIntervalEnd()) {
                continue; // an end without a start: not ours to pair; never rendered
            }
            if (i + 1 < sorted.size() && sorted.get(i + 1).isIntervalEnd()) {
                out.add(List.of(start, sorted.get(++i)));
            } else {
                out.add(List.of(start));
            }
        }
        return out;
    }
}
