package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.PackedElements;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Verdict;

/** The packed element table against a HashMap doing the same, over random operations. */
class ElementTableTest {
    private record Entry(SetElement element, int refs) {
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void behavesAsAMapOfKeysToElementsAndCounts(long seed) {
        Random r = new Random(seed);
        // Few distinct keys and many operations: long probe runs, wrap-around, removal inside runs.
        int keys = 50 + r.nextInt(400);
        ElementTable table = new ElementTable(r.nextInt(20));
        Map<Bytes, Entry> model = new HashMap<>();
        for (int step = 0; step < 20_000; step++) {
            Bytes key = Bytes.be32(r.nextInt(keys));
            SetElement el = r.nextBoolean() ? SetElement.of(key, Data.value(Bytes.be32(r.nextInt(4))))
                    : SetElement.of(key, Verdict.goTo("pick-" + r.nextInt(3)));
            int op = r.nextInt(10);
            String what = "seed " + seed + " step " + step + " op " + op + " key " + key;
            if (op < 3) {
                PackedElements one = PackedElements.copyOf(List.of(el));
                boolean added = table.addOrCount(one, 0);
                Entry was = model.get(key);
                assertEquals(was == null, added, what);
                model.put(key, was == null ? new Entry(el, 1) : new Entry(was.element(), was.refs() + 1));
            } else if (op < 5) {
                int refs = 1 + r.nextInt(3);
                table.put(el, refs);
                model.put(key, new Entry(el, refs));
            } else if (op < 7) {
                // Counted out by a packed element of the key (its data aside), as a refused batch is.
                Entry was = model.get(key);
                PackedElements one = PackedElements.copyOf(List.of(SetElement.of(key, Data.value(Bytes.be32(7)))));
                if (was == null) {
                    assertThrows(IllegalStateException.class, () -> table.uncount(one.bytes(), one.offset(0)), what);
                } else {
                    table.uncount(one.bytes(), one.offset(0));
                    if (was.refs() == 1) {
                        model.remove(key);
                    } else {
                        model.put(key, new Entry(was.element(), was.refs() - 1));
                    }
                }
            } else {
                table.remove(key);
                model.remove(key);
            }
            assertEquals(model.size(), table.size(), what);
            Bytes probe = Bytes.be32(r.nextInt(keys));
            int slot = table.find(probe);
            // The same found by a packed element of that key (data aside), without a key object.
            PackedElements packedProbe = PackedElements.copyOf(List.of(SetElement.of(probe, Data.value(Bytes.be32(9)))));
            assertEquals(slot, table.find(packedProbe.bytes(), packedProbe.offset(0)), what + " packed probe " + probe);
            Entry expected = model.get(probe);
            if (expected == null) {
                assertEquals(-1, slot, what + " probe " + probe);
            } else {
                assertTrue(slot >= 0, what + " probe " + probe);
                assertEquals(expected.element(), table.element(slot), what);
                assertEquals(expected.refs(), table.refs(slot), what);
            }
        }
        for (Map.Entry<Bytes, Entry> e : model.entrySet()) {
            int slot = table.find(e.getKey());
            assertEquals(e.getValue().element(), table.element(slot));
            assertEquals(e.getValue().refs(), table.refs(slot));
        }
        List<SetElement> all = new ArrayList<>(table.elements());
        assertEquals(model.size(), all.size());
        assertEquals(new HashSet<>(model.values().stream().map(Entry::element).toList()), new HashSet<>(all));
    }

    @ParameterizedTest(name = "count {0}")
    @ValueSource(ints = {0, -1})
    void anElementWithoutAContributorIsNotKept(int refs) {
        ElementTable t = new ElementTable(1);
        assertThrows(IllegalArgumentException.class, () -> t.put(SetElement.of(Bytes.u8(1)), refs));
    }
}
