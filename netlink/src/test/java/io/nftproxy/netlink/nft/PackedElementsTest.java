package io.nftproxy.netlink.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

class PackedElementsTest {
    /** Every field an element can carry, alone and together. */
    static List<SetElement> variety() {
        Bytes k = Bytes.concat(Bytes.ip("10.0.0.1"), Bytes.of((byte) 6, (byte) 0, (byte) 0, (byte) 0), Bytes.be16(80).padTo4(), Bytes.host32(3));
        return List.of(
                SetElement.of(Bytes.ip("10.96.0.1")),
                SetElement.of(k, Data.value(Bytes.concat(Bytes.ip("10.244.1.5"), Bytes.be16(8080).padTo4()))),
                SetElement.of(k, Verdict.goTo("pick-10")),
                SetElement.of(k, Verdict.jump("svc-default/kubernetes/tcp/https")),
                SetElement.of(k, Verdict.DROP),
                SetElement.of(k, Verdict.ACCEPT),
                SetElement.of(k, Verdict.RETURN),
                SetElement.of(Bytes.ip("10.0.0.0")),
                new SetElement(Bytes.ip("10.1.0.0"), null, null, 0, 0, NfTablesUapi.NFT_SET_ELEM_INTERVAL_END),
                new SetElement(Bytes.ip("10.0.0.0"), Bytes.ip("10.0.255.255"), null, 0, 0, 0),
                SetElement.of(Bytes.ip("192.168.1.1")).withTimeout(10_800_000L),
                new SetElement(Bytes.ip("fd00::1"), null, Data.value(Bytes.u8(1)), 5_000_000_000L, 4_999_000_123L, 7),
                SetElement.of(Bytes.of(), Data.value(Bytes.of())),
                SetElement.of(k, Verdict.goTo("ünïcode-chain")),
                SetElement.of(k, Verdict.goTo("pick-3")).withComment("default/web:http"),
                new SetElement(Bytes.ip("10.1.0.0"), null, null, 600_000, 0, 1, "ünïcode/comment:p"));
    }

    @Test
    void everyKindOfElementComesBackAsItWent() {
        List<SetElement> in = variety();
        PackedElements packed = PackedElements.copyOf(in);
        assertEquals(in.size(), packed.size());
        for (int i = 0; i < in.size(); i++) {
            assertEquals(in.get(i), packed.get(i), "element " + i);
            assertEquals(in.get(i), PackedElements.decode(PackedElements.pack(in.get(i)), 0), "alone, element " + i);
            assertEquals(PackedElements.pack(in.get(i)).length, packed.length(i));
            assertEquals(packed.length(i), PackedElements.packedLength(packed.bytes(), packed.offset(i)), "length read in place, element " + i);
        }
        assertEquals(in, packed);
        assertEquals(packed, in);
        assertEquals(in.hashCode(), packed.hashCode());
    }

    @Test
    void keysHashAndCompareAsBytesDoWithoutDecoding() {
        for (SetElement e : variety()) {
            byte[] p = PackedElements.pack(e);
            assertEquals(e.key().hashCode(), PackedElements.keyHash(p, 0), e.toString());
            assertTrue(PackedElements.keyEquals(p, 0, e.key()));
            assertEquals(e.key(), PackedElements.key(p, 0));
            assertFalse(PackedElements.keyEquals(p, 0, Bytes.concat(e.key(), Bytes.u8(0))), "a longer key differs");
        }
        byte[] a = PackedElements.pack(SetElement.of(Bytes.ip("10.0.0.1"), Verdict.goTo("pick-1")));
        byte[] b = PackedElements.pack(SetElement.of(Bytes.ip("10.0.0.1"), Verdict.goTo("pick-2")));
        byte[] c = PackedElements.pack(SetElement.of(Bytes.ip("10.0.0.2"), Verdict.goTo("pick-1")));
        assertTrue(PackedElements.keyEquals(a, 0, b, 0), "same key, other data");
        assertFalse(PackedElements.keyEquals(a, 0, c, 0));
    }

    @Test
    void packedListsEqualWhenTheirElementsDo() {
        PackedElements one = PackedElements.copyOf(variety());
        PackedElements two = PackedElements.copyOf(new ArrayList<>(variety()));
        assertEquals(one, two);
        assertSame(one, PackedElements.copyOf(one), "a packed list is not packed again");
        List<SetElement> changed = new ArrayList<>(variety());
        changed.set(2, SetElement.of(changed.get(2).key(), Verdict.goTo("pick-11")));
        assertNotEquals(one, PackedElements.copyOf(changed));
        assertNotEquals(one, PackedElements.copyOf(variety().subList(1, variety().size())));
        assertEquals(PackedElements.EMPTY, PackedElements.copyOf(List.of()));
        assertEquals(List.of(), PackedElements.EMPTY);
    }

    @Test
    void aBuilderGrowsAndCopiesPackedElementsAsTheyAre() {
        Random r = new Random(42);
        List<SetElement> in = new ArrayList<>();
        PackedElements.Builder b = PackedElements.builder();
        PackedElements.Builder copy = PackedElements.builder();
        for (int i = 0; i < 10_000; i++) {
            byte[] key = new byte[1 + r.nextInt(40)];
            r.nextBytes(key);
            SetElement e = r.nextBoolean() ? SetElement.of(Bytes.of(key)) : SetElement.of(Bytes.of(key), Verdict.goTo("c" + i));
            in.add(e);
            b.add(e);
        }
        PackedElements packed = b.build();
        for (int i = 0; i < packed.size(); i++) {
            copy.addPacked(packed.bytes(), packed.offset(i), packed.length(i));
        }
        assertEquals(in, packed);
        assertEquals(packed, copy.build());
        assertThrows(IndexOutOfBoundsException.class, () -> packed.get(10_000));
    }

    @Test
    void whatNoSetHoldsIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> PackedElements.pack(SetElement.of(Bytes.of(new byte[256]))));
        assertThrows(IllegalArgumentException.class,
                () -> PackedElements.pack(SetElement.of(Bytes.u8(1), Data.value(Bytes.of(new byte[256])))));
    }

    @Test
    void elementsOperationsKeepAPackedListPacked() {
        PackedElements packed = PackedElements.copyOf(variety());
        Elements e = new Elements(Family.IP, "t", "s", packed);
        assertSame(packed, e.elements());
    }

    @Test
    void segmentsReadAsTheirPartsSideBySideWithoutCopying() {
        List<SetElement> all = variety();
        int cut1 = 2;
        int cut2 = all.size() - 1;
        List<PackedElements> parts = List.of(PackedElements.copyOf(all.subList(0, cut1)), PackedElements.EMPTY,
                PackedElements.copyOf(all.subList(cut1, cut2)), PackedElements.copyOf(all.subList(cut2, all.size())));
        List<SetElement> joined = PackedSegments.of(parts);
        assertEquals(all.size(), joined.size());
        for (int i = 0; i < all.size(); i++) {
            assertEquals(all.get(i), joined.get(i), "element " + i);
        }
        assertEquals(all, joined);
        assertThrows(IndexOutOfBoundsException.class, () -> joined.get(all.size()));
        assertSame(joined, new Elements(Family.IP, "t", "s", joined).elements());
        assertSame(parts.get(0), PackedSegments.of(List.of(PackedElements.EMPTY, parts.get(0))));
        assertSame(PackedElements.EMPTY, PackedSegments.of(List.of()));
    }
}
