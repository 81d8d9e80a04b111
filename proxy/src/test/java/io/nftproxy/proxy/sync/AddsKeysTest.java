package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.TreeMap;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@link Syncer#addsKeys}: whether the demand after a sync has an on-demand part the table lacks. */
class AddsKeysTest {
    @ParameterizedTest(name = "{0} -> {1}: {2}")
    @CsvSource(delimiter = ';', value = {
        "a b c; a b c; false",
        "a b c; a c; false",
        "a b c; a b c d; true",
        "a c; a b; true",
        "b c; a; true",
        "; ; false",
        "a; ; false",
        "; a; true",
        "tree:ip service-endpoints-1-8; service-endpoints-1-8 service-endpoints-1025-1152; true",
    })
    void findsAKeyTheTableLacks(String before, String after, boolean adds) {
        assertEquals(adds, Syncer.addsKeys(map(before), map(after)));
    }

    private static TreeMap<String, Integer> map(String keys) {
        TreeMap<String, Integer> out = new TreeMap<>();
        for (String k : keys == null ? List.<String>of() : List.of(keys.trim().split("\\s+"))) {
            if (!k.isEmpty()) {
                out.put(k, 1);
            }
        }
        return out;
    }
}
