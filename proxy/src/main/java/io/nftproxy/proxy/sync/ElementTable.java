package io.nftproxy.proxy.sync;

import java.util.Arrays;
import java.util.function.Consumer;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.PackedElements;
import io.nftproxy.netlink.nft.SetElement;

/**
 * The elements we committed to one set, each with the number of fragments that contribute it,
 * found by key. It holds every element of the table for as long as the daemon runs (about 700,000
 * at 30,000 services), so it keeps each as one array of its packed bytes in an open-addressing
 * table with the key's hash and the count beside it: about 65 bytes an element, where a
 * {@code HashMap} of element objects took about 200. Linear probing, deletion by shifting back
 * (no tombstones). Not thread-safe.
 */
final class ElementTable {
    private byte[][] entries;
    private int[] hashes;
    private int[] refs;
    private int size;

    ElementTable(int expected) {
        int cap = 16;
        while (cap * 7L / 10 < expected) {
            cap <<= 1;
        }
        entries = new byte[cap][];
        hashes = new int[cap];
        refs = new int[cap];
    }

    int size() {
        return size;
    }

    /** The slot of the element with this key, or -1. */
    int find(Bytes key) {
        int mask = entries.length - 1;
        int h = key.hashCode();
        for (int i = h & mask; ; i = (i + 1) & mask) {
            byte[] e = entries[i];
            if (e == null) {
                return -1;
            }
            if (hashes[i] == h && PackedElements.keyEquals(e, 0, key)) {
                return i;
            }
        }
    }

    int refs(int slot) {
        return refs[slot];
    }

    SetElement element(int slot) {
        return PackedElements.decode(entries[slot], 0);
    }

    /** Every element, packed, in slot order: for re-sending them without decoding. */
    void forEachPacked(Consumer<byte[]> each) {
        for (byte[] e : entries) {
            if (e != null) {
                each.accept(e);
            }
        }
    }

    /**
     * Counts element i of {@code src} once more, adding it with one reference when its key is new.
     * True when it was new: the first contribution of a key is the one kept.
     */
    boolean addOrCount(PackedElements src, int i) {
        byte[] b = src.bytes();
        int off = src.offset(i);
        int h = PackedElements.keyHash(b, off);
        int mask = entries.length - 1;
        int s = h & mask;
        for (; entries[s] != null; s = (s + 1) & mask) {
            if (hashes[s] == h && PackedElements.keyEquals(entries[s], 0, b, off)) {
                refs[s]++;
                return false;
            }
        }
        insertAt(s, h, src.packed(i), 1);
        return true;
    }

    /** Sets the element of its key (added, or replacing the one with the same key) and its count. */
    void put(SetElement el, int count) {
        if (count <= 0) {
            throw new IllegalArgumentException("an element kept must have a contributor, not " + count);
        }
        Bytes key = el.key();
        int h = key.hashCode();
        int mask = entries.length - 1;
        int s = h & mask;
        for (; entries[s] != null; s = (s + 1) & mask) {
            if (hashes[s] == h && PackedElements.keyEquals(entries[s], 0, key)) {
                entries[s] = PackedElements.pack(el);
                refs[s] = count;
                return;
            }
        }
        insertAt(s, h, PackedElements.pack(el), count);
    }

    private void insertAt(int s, int h, byte[] packed, int count) {
        entries[s] = packed;
        hashes[s] = h;
        refs[s] = count;
        if (++size * 10L > entries.length * 7L) {
            grow();
        }
    }

    /** Removes the element with this key, if there is one. */
    void remove(Bytes key) {
        int s = find(key);
        if (s < 0) {
            return;
        }
        int mask = entries.length - 1;
        // Shift back the run after the hole, so that every probe sequence stays unbroken.
        int hole = s;
        for (int i = (s + 1) & mask; entries[i] != null; i = (i + 1) & mask) {
            int home = hashes[i] & mask;
            // Element i may move into the hole when the hole lies between its home slot and i.
            boolean movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
            if (movable) {
                entries[hole] = entries[i];
                hashes[hole] = hashes[i];
                refs[hole] = refs[i];
                hole = i;
            }
        }
        entries[hole] = null;
        hashes[hole] = 0;
        refs[hole] = 0;
        size--;
    }

    private void grow() {
        byte[][] oldEntries = entries;
        int[] oldHashes = hashes;
        int[] oldRefs = refs;
        int cap = oldEntries.length * 2;
        entries = new byte[cap][];
        hashes = new int[cap];
        refs = new int[cap];
        int mask = cap - 1;
        for (int j = 0; j < oldEntries.length; j++) {
            if (oldEntries[j] != null) {
                int s = oldHashes[j] & mask;
                while (entries[s] != null) {
                    s = (s + 1) & mask;
                }
                entries[s] = oldEntries[j];
                hashes[s] = oldHashes[j];
                refs[s] = oldRefs[j];
            }
        }
    }

    /** Every element, packed, in no particular order. */
    PackedElements elements() {
        PackedElements.Builder b = PackedElements.builder();
        for (byte[] e : entries) {
            if (e != null) {
                b.addPacked(e);
            }
        }
        return b.build();
    }

    @Override
    public String toString() {
        return "ElementTable[" + size + " of " + entries.length + " slots, " + Arrays.stream(refs).sum() + " references]";
    }
}
