package io.nftproxy.proxy.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

class VersionedMapTest {
    /** Random writes against a HashMap; every snapshot keeps showing the map as it was when taken. */
    @Test
    void snapshotsStayAsTheyWereTaken() {
        Random r = new Random(7);
        VersionedMap<Integer, String> m = new VersionedMap<>();
        Map<Integer, String> model = new HashMap<>();
        List<Map<Integer, String>> snaps = new ArrayList<>();
        List<Map<Integer, String>> expected = new ArrayList<>();
        for (int step = 0; step < 20_000; step++) {
            int k = r.nextInt(2_000);
            if (r.nextInt(3) == 0) {
                assertEquals(model.remove(k), m.remove(k));
            } else {
                String v = "v" + step;
                assertEquals(model.put(k, v), m.put(k, v));
            }
            assertEquals(model.size(), m.size());
            assertEquals(model.get(k), m.get(k));
            if (step % 1_000 == 0) {
                snaps.add(m.snapshot());
                expected.add(new HashMap<>(model));
            }
        }
        for (int i = 0; i < snaps.size(); i++) {
            assertEquals(expected.get(i), snaps.get(i), "snapshot " + i);
            assertEquals(expected.get(i).size(), snaps.get(i).size());
            assertEquals(snaps.get(i), expected.get(i));
        }
        Map<Integer, String> now = m.snapshot();
        assertEquals(model, now);
        assertEquals(model.hashCode(), now.hashCode());
    }

    @Test
    void aSnapshotCannotBeChanged() {
        VersionedMap<String, String> m = new VersionedMap<>();
        m.put("a", "1");
        Map<String, String> s = m.snapshot();
        assertThrows(UnsupportedOperationException.class, () -> s.put("b", "2"));
        assertThrows(UnsupportedOperationException.class, () -> s.entrySet().iterator().next().setValue("2"));
        assertThrows(UnsupportedOperationException.class, () -> {
            var it = s.entrySet().iterator();
            it.next();
            it.remove();
        });
        assertThrows(NullPointerException.class, () -> m.put(null, "x"));
        assertEquals(Map.of("a", "1"), s);
    }
}
