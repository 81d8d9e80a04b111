package io.nftproxy.proxy.sync;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.PackedElements;
import io.nftproxy.netlink.nft.SetElement;

/**
 * The elements we committed to one set, each with the number of fragments that contribute it,
 * found by key. It holds every element of the table for as long as the daemon runs (about 700,000
 * at 30,000 services), so an element is where its packed bytes already are — the array of the
 * fragment or of the batch it came in, and its offset there — not a copy: the slot is a reference,
 * an offset, the key's hash and the count (about 28 bytes an element at the table's load, where a
 * copied array each took about 75 and a {@code HashMap} of element objects about 200). With the
 * batch reading the fragments' lists in place too ({@code PackedSegments}), a first sync holds
 * the elements' bytes once. An array stays alive while one of its elements does: at most the
 * arrays of the elements' first commit.
 * Linear probing, deletion by shifting back (no tombstones). Not thread-safe.
 */
final class ElementTable {
    private byte[][] arrays;
    private int[] offsets;
    private int[] hashes;
    private int[] refs;
    private int size;

    ElementTable(int expected) {
        int cap = 16;
        while (cap * 7L / 10 < expected) {
            cap <<= 1;
        }
        allocate(cap);
    }

    private void allocate(int cap) {
        arrays = new byte[cap][];
        offsets = new int[cap];
        hashes = new int[cap];
        refs = new int[cap];
    }

    int size() {
        return size;
    }

    /** The slot of the element with this key, or -1. */
    int find(Bytes key) {
        int mask = arrays.length - 1;
        int h = key.hashCode();
        for (int i = h & mask; ; i = (i + 1) & mask) {
            if (arrays[i] == null) {
                return -1;
            }
            if (hashes[i] == h && PackedElements.keyEquals(arrays[i], offsets[i], key)) {
                return i;
            }
        }
    }

    /** The slot of the element whose key is that of the packed element in {@code b} at {@code off}, or -1. */
    int find(byte[] b, int off) {
        int h = PackedElements.keyHash(b, off);
        int mask = arrays.length - 1;
        for (int i = h & mask; ; i = (i + 1) & mask) {
            if (arrays[i] == null) {
                return -1;
            }
            if (hashes[i] == h && PackedElements.keyEquals(arrays[i], offsets[i], b, off)) {
                return i;
            }
        }
    }

    int refs(int slot) {
        return refs[slot];
    }

    SetElement element(int slot) {
        return PackedElements.decode(arrays[slot], offsets[slot]);
    }

    /** Every element, packed (its array and offset), in slot order: for re-sending them without decoding. */
    void forEachPacked(PackedConsumer each) {
        for (int i = 0; i < arrays.length; i++) {
            if (arrays[i] != null) {
                each.accept(arrays[i], offsets[i]);
            }
        }
    }

    /** Every element's key, in slot order. */
    List<Bytes> keys() {
        List<Bytes> out = new ArrayList<>(size);
        forEachPacked((bytes, offset) -> out.add(PackedElements.key(bytes, offset)));
        return out;
    }

    /** An element's packed bytes where they are: in {@code bytes} from {@code offset}. */
    @FunctionalInterface
    interface PackedConsumer {
        void accept(byte[] bytes, int offset);
    }

    /**
     * Counts element i of {@code src} once more, adding it with one reference when its key is new
     * (kept where it is in {@code src}'s array). True when it was new: the first contribution of
     * a key is the one kept.
     */
    boolean addOrCount(PackedElements src, int i) {
        byte[] b = src.bytes();
        int off = src.offset(i);
        int h = PackedElements.keyHash(b, off);
        int mask = arrays.length - 1;
        int s = h & mask;
        for (; arrays[s] != null; s = (s + 1) & mask) {
            if (hashes[s] == h && PackedElements.keyEquals(arrays[s], offsets[s], b, off)) {
                refs[s]++;
                return false;
            }
        }
        insertAt(s, h, b, off, 1);
        return true;
    }

    /** Sets the element of its key (added, or replacing the one with the same key) and its count. */
    void put(SetElement el, int count) {
        if (count <= 0) {
            throw new IllegalArgumentException("an element kept must have a contributor, not " + count);
        }
        Bytes key = el.key();
        int h = key.hashCode();
        int mask = arrays.length - 1;
        int s = h & mask;
        for (; arrays[s] != null; s = (s + 1) & mask) {
            if (hashes[s] == h && PackedElements.keyEquals(arrays[s], offsets[s], key)) {
                arrays[s] = PackedElements.pack(el);
                offsets[s] = 0;
                refs[s] = count;
                return;
            }
        }
        insertAt(s, h, PackedElements.pack(el), 0, count);
    }

    private void insertAt(int s, int h, byte[] bytes, int offset, int count) {
        arrays[s] = bytes;
        offsets[s] = offset;
        hashes[s] = h;
        refs[s] = count;
        if (++size * 10L > arrays.length * 7L) {
            grow();
        }
    }

    /** Removes the element with this key, if there is one. */
    void remove(Bytes key) {
        int s = find(key);
        if (s >= 0) {
            removeSlot(s);
        }
    }

    /**
     * Counts the element whose key is that of the packed element in {@code b} at {@code off}
     * once less, removing it at none: the inverse of {@link #addOrCount}.
     */
    void uncount(byte[] b, int off) {
        int s = find(b, off);
        if (s < 0) {
            throw new IllegalStateException("an element not held cannot be counted out");
        }
        if (--refs[s] == 0) {
            removeSlot(s);
        }
    }

    private void removeSlot(int s) {
        int mask = arrays.length - 1;
        // Shift back the run after the hole, so that every probe sequence stays unbroken.
        int hole = s;
        for (int i = (s + 1) & mask; arrays[i] != null; i = (i + 1) & mask) {
            int home = hashes[i] & mask;
            // Element i may move into the hole when the hole lies between its home slot and i.
            boolean movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
            if (movable) {
                arrays[hole] = arrays[i];
                offsets[hole] = offsets[i];
                hashes[hole] = hashes[i];
                refs[hole] = refs[i];
                hole = i;
            }
        }
        arrays[hole] = null;
        offsets[hole] = 0;
        hashes[hole] = 0;
        refs[hole] = 0;
        size--;
    }

    private void grow() {
        byte[][] oldArrays = arrays;
        int[] oldOffsets = offsets;
        int[] oldHashes = hashes;
        int[] oldRefs = refs;
        allocate(oldArrays.length * 2);
        int mask = arrays.length - 1;
        for (int j = 0; j < oldArrays.length; j++) {
            if (oldArrays[j] != null) {
                int s = oldHashes[j] & mask;
                while (arrays[s] != null) {
                    s = (s + 1) & mask;
                }
                arrays[s] = oldArrays[j];
                offsets[s] = oldOffsets[j];
                hashes[s] = oldHashes[j];
                refs[s] = oldRefs[j];
            }
        }
    }

    /** Every element, packed, in no particular order. */
    PackedElements elements() {
        PackedElements.Builder b = PackedElements.builder();
        forEachPacked((bytes, offset) -> b.addPacked(bytes, offset, PackedElements.packedLength(bytes, offset)));
        return b.build();
    }

    @Override
    public String toString() {
        return "ElementTable[" + size + " of " + arrays.length + " slots, " + Arrays.stream(refs).sum() + " references]";
    }
}
