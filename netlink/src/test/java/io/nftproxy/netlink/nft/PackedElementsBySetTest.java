package io.nftproxy.netlink.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class PackedElementsBySetTest {
    /** Three sets, one of them empty, one given as a packed list (itself a run of another packing). */
    private static Map<String, List<SetElement>> sample() {
        List<SetElement> all = PackedElementsTest.variety();
        Map<String, List<SetElement>> inner = new LinkedHashMap<>();
        inner.put("before", all.subList(0, 2));
        inner.put("packed", all.subList(2, 9));
        Map<String, List<SetElement>> in = new LinkedHashMap<>();
        in.put("service-ips", all.subList(9, all.size()));
        in.put("none", List.of());
        in.put("endpoints", PackedElementsBySet.copyOf(inner).get("packed"));
        return in;
    }

    @Test
    void everySetKeepsItsElementsInItsOrder() {
        Map<String, List<SetElement>> in = sample();
        Map<String, List<SetElement>> packed = PackedElementsBySet.copyOf(in);
        assertEquals(List.of("service-ips", "none", "endpoints"), new ArrayList<>(packed.keySet()), "the sets, in order");
        for (Map.Entry<String, List<SetElement>> e : in.entrySet()) {
            List<SetElement> run = packed.get(e.getKey());
            assertEquals(e.getValue(), run, e.getKey());
            assertEquals(PackedElements.copyOf(e.getValue()), run, e.getKey() + ", as bytes");
            for (int i = 0; i < run.size(); i++) {
                PackedElements p = (PackedElements) run;
                assertEquals(e.getValue().get(i), PackedElements.decode(p.bytes(), p.offset(i)), e.getKey() + " read in place, " + i);
                assertEquals(PackedElements.pack(e.getValue().get(i)).length, p.length(i));
            }
        }
        assertEquals(in, packed);
        assertEquals(packed, in);
        assertEquals(in.hashCode(), packed.hashCode());
        assertTrue(packed.get("none").isEmpty());
        assertNull(packed.get("other"));
        assertFalse(packed.containsKey("other"));
        assertEquals(List.of(), packed.getOrDefault("other", List.of()));
        List<String> seen = new ArrayList<>();
        packed.forEach((set, els) -> seen.add(set + ":" + els.size()));
        assertEquals(List.of("service-ips:" + in.get("service-ips").size(), "none:0", "endpoints:7"), seen);
    }

    @Test
    void aRunIsBoundedByItsSet() {
        PackedElements run = (PackedElements) PackedElementsBySet.copyOf(sample()).get("endpoints");
        assertEquals(7, run.size());
        assertThrows(IndexOutOfBoundsException.class, () -> run.offset(7));
        assertThrows(IndexOutOfBoundsException.class, () -> run.get(-1));
        assertEquals(PackedElementsTest.variety().get(8), run.get(6), "the last of the run, not the next set's first");
    }

    @Test
    void packedMapsAreImmutableAndNotPackedAgain() {
        Map<String, List<SetElement>> packed = PackedElementsBySet.copyOf(sample());
        assertSame(packed, PackedElementsBySet.copyOf(packed));
        assertSame(Map.of(), PackedElementsBySet.copyOf(Map.of()));
        assertThrows(UnsupportedOperationException.class, () -> packed.put("x", List.of()));
        assertThrows(UnsupportedOperationException.class, () -> packed.remove("none"));
        Map<String, List<SetElement>> changed = new LinkedHashMap<>(sample());
        changed.put("none", List.of(SetElement.of(Bytes.ip("10.9.9.9"))));
        assertNotEquals(packed, PackedElementsBySet.copyOf(changed));
    }
}
