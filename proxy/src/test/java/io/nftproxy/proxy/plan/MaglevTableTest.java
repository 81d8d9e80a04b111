package io.nftproxy.proxy.plan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Endpoint;

/**
 * Maglev's table as the paper promises it: every slot filled, the endpoints' shares within one
 * slot of each other, the same table whatever order the endpoints come in, and, when one endpoint
 * comes or goes within its count's bucket, only a few percent of the other endpoints' slots move.
 */
class MaglevTableTest {
    static List<Endpoint> endpoints(int n) {
        List<Endpoint> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(Endpoint.ready(Inet.parse("10.244." + (i / 200) + "." + (i % 200 + 2)), 8080, "node-" + (i % 3)));
        }
        return out;
    }

    @ParameterizedTest(name = "{0} endpoints: {1} slots")
    @CsvSource({"1, 809", "3, 809", "8, 809", "9, 1601", "10, 1601", "16, 1601", "17, 3203", "100, 12809", "1000, 102407"})
    void sizedForAHundredSlotsAnEndpointOfItsBucket(int count, int size) {
        assertEquals(size, MaglevTable.sizeFor(count));
        assertTrue(MaglevTable.isPrime(size));
    }

    @ParameterizedTest(name = "{0} endpoints")
    @CsvSource({"1", "2", "3", "10", "16", "100", "1000"})
    void everySlotFilledAndEveryShareWithinOneSlot(int count) {
        MaglevTable t = MaglevTable.of(endpoints(count), MaglevTable.sizeFor(count));
        int[] share = new int[count];
        for (int s : t.slots()) {
            share[s]++;
        }
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (int s : share) {
            min = Math.min(min, s);
            max = Math.max(max, s);
        }
        assertEquals(t.size(), t.slots().length);
        assertTrue(max - min <= 1, "shares from " + min + " to " + max + " slots");
    }

    @Test
    void theSameTableWhateverTheOrder() {
        List<Endpoint> eps = endpoints(37);
        MaglevTable first = MaglevTable.of(eps, MaglevTable.sizeFor(37));
        for (long seed = 1; seed <= 5; seed++) {
            List<Endpoint> shuffled = new ArrayList<>(eps);
            Collections.shuffle(shuffled, new Random(seed));
            assertEquals(first, MaglevTable.of(shuffled, MaglevTable.sizeFor(37)));
        }
    }

    /**
     * The slots of the endpoints that stayed, moved to another when one endpoint goes or comes:
     * {@code 10 -> 9} and {@code 10 -> 11} (one bucket, one size), as a share of all slots.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        "one of 10 goes: its own tenth, and at most 2% of the others'; 10; 9; 0.12",
        "one joins 10: its own eleventh, and at most 2% more; 10; 11; 0.12",
        "one of 100 goes; 100; 99; 0.03",
        "one joins 100; 100; 101; 0.03",
    })
    void fewSlotsMoveWhenOneEndpointComesOrGoes(String description, int before, int after, double atMost) {
        List<Endpoint> all = endpoints(Math.max(before, after));
        int size = MaglevTable.sizeFor(before);
        assertEquals(size, MaglevTable.sizeFor(after), "one bucket");
        MaglevTable was = MaglevTable.of(all.subList(0, before), size);
        MaglevTable is = MaglevTable.of(all.subList(0, after), size);
        int moved = 0;
        for (int i = 0; i < size; i++) {
            if (!was.endpointAt(i).equals(is.endpointAt(i))) {
                moved++;
            }
        }
        double share = (double) moved / size;
        assertTrue(share <= atMost, description + ": " + moved + " of " + size + " slots moved (" + share + ")");
        // And no fewer than Maglev must move: the slots of the one that went, or the new one's share.
        assertTrue(moved >= size / Math.max(before, after), moved + " moved");
    }

    /**
     * What every node computes for three endpoints: nodes that agree on the endpoints agree on
     * where a client goes only while they compute the same table, so a change to the hashes is a
     * change every node of a cluster must take at once (a rolling upgrade would split clients).
     */
    @Test
    void theTableEveryNodeComputes() {
        MaglevTable t = MaglevTable.of(endpoints(3), 809);
        int[] first = new int[16];
        System.arraycopy(t.slots(), 0, first, 0, 16);
        assertArrayEquals(new int[] {0, 1, 2, 0, 1, 1, 1, 2, 2, 0, 2, 2, 0, 1, 0, 1}, first,
                "the first slots of the table of 10.244.0.2-4:8080 in 809 slots");
    }

    @Test
    void refusesASizeThatIsNoPrimeOrTooSmall() {
        assertThrows(IllegalArgumentException.class, () -> MaglevTable.of(endpoints(3), 800));
        assertThrows(IllegalArgumentException.class, () -> MaglevTable.of(endpoints(10), 7));
    }
}
