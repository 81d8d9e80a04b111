package io.nftproxy.netlink.nft;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * Elements for several sets, by set name, packed together: one array of bytes and one of offsets
 * for all of them, each set's elements a run of them read as a {@link PackedElements} list. A
 * proxy keeps one such map per service port for as long as it runs (the elements its fragment
 * adds to six or seven sets); a map of a list per set cost about 870 bytes a port in maps,
 * entries, views and the lists' own arrays (a heap dump at 10,000 services × 10: 65,000 lists),
 * this about 150. The set names keep their order; a set may have no element. Immutable.
 */
public final class PackedElementsBySet extends AbstractMap<String, List<SetElement>> {
    private final String[] sets;
    /** Set j's elements are elements starts[j] to starts[j + 1] of the packing. */
    private final int[] starts;
    private final byte[] bytes;
    private final int[] offsets;

    private PackedElementsBySet(String[] sets, int[] starts, byte[] bytes, int[] offsets) {
        this.sets = sets;
        this.starts = starts;
        this.bytes = bytes;
        this.offsets = offsets;
    }

    /** The same sets and elements packed together, in the map's order; a packed map is returned as it is. */
    public static Map<String, List<SetElement>> copyOf(Map<String, ? extends List<SetElement>> bySet) {
        if (bySet instanceof PackedElementsBySet p) {
            return p;
        }
        if (bySet.isEmpty()) {
            return Map.of();
        }
        String[] sets = new String[bySet.size()];
        int[] starts = new int[sets.length + 1];
        int count = 0;
        int length = 0;
        int j = 0;
        for (Map.Entry<String, ? extends List<SetElement>> e : bySet.entrySet()) {
            sets[j] = e.getKey();
            starts[j++] = count;
            List<SetElement> list = e.getValue();
            count += list.size();
            if (list instanceof PackedElements p) {
                for (int i = 0; i < p.size(); i++) {
                    length += p.length(i);
                }
            } else {
                for (SetElement el : list) {
                    length += PackedElements.packedLength(el);
                }
            }
        }
        starts[sets.length] = count;
        byte[] bytes = new byte[length];
        int[] offsets = new int[count + 1];
        int at = 0;
        int n = 0;
        for (List<SetElement> list : bySet.values()) {
            if (list instanceof PackedElements p) {
                for (int i = 0; i < p.size(); i++) {
                    int len = p.length(i);
                    System.arraycopy(p.bytes(), p.offset(i), bytes, at, len);
                    at += len;
                    offsets[++n] = at;
                }
            } else {
                for (SetElement el : list) {
                    PackedElements.write(el, bytes, at);
                    at += PackedElements.packedLength(el);
                    offsets[++n] = at;
                }
            }
        }
        return new PackedElementsBySet(sets, starts, bytes, offsets);
    }

    private PackedElements run(int j) {
        return PackedElements.run(bytes, offsets, starts[j], starts[j + 1] - starts[j]);
    }

    private int indexOf(Object set) {
        for (int j = 0; j < sets.length; j++) {
            if (sets[j].equals(set)) {
                return j;
            }
        }
        return -1;
    }

    @Override
    public int size() {
        return sets.length;
    }

    @Override
    public boolean containsKey(Object set) {
        return indexOf(set) >= 0;
    }

    @Override
    public List<SetElement> get(Object set) {
        int j = indexOf(set);
        return j < 0 ? null : run(j);
    }

    @Override
    public void forEach(BiConsumer<? super String, ? super List<SetElement>> action) {
        for (int j = 0; j < sets.length; j++) {
            action.accept(sets[j], run(j));
        }
    }

    @Override
    public Set<Map.Entry<String, List<SetElement>>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public int size() {
                return sets.length;
            }

            @Override
            public Iterator<Map.Entry<String, List<SetElement>>> iterator() {
                return new Iterator<>() {
                    private int j;

                    @Override
                    public boolean hasNext() {
                        return j < sets.length;
                    }

                    @Override
                    public Map.Entry<String, List<SetElement>> next() {
                        if (j >= sets.length) {
                            throw new NoSuchElementException();
                        }
                        Map.Entry<String, List<SetElement>> e = new SimpleImmutableEntry<>(sets[j], run(j));
                        j++;
                        return e;
                    }
                };
            }
        };
    }
}
