package io.nftproxy.netlink.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

class BytesTest {
    /** Keys shaped like the proxy's endpoint map: address . protocol . port . index, padded to 4 bytes each. */
    private static Bytes endpointKey(int service, int index) {
        return Bytes.concat(Bytes.be32(0x0a600000 + service), Bytes.u8(6).padTo4(), Bytes.be16(80).padTo4(),
                Bytes.host32(index));
    }

    @Test
    void structuredKeysHashApart() {
        Set<Integer> hashes = new HashSet<>();
        Map<Integer, Integer> buckets = new HashMap<>();
        for (int s = 0; s < 10_000; s++) {
            for (int i = 0; i < 10; i++) {
                int h = endpointKey(s, i).hashCode();
                hashes.add(h);
                // the bucket HashMap would use in a table of 2^18
                buckets.merge((h ^ (h >>> 16)) & ((1 << 18) - 1), 1, Integer::sum);
            }
        }
        assertTrue(hashes.size() >= 99_990, "distinct hashes of 100,000 keys: " + hashes.size());
        int worst = buckets.values().stream().mapToInt(Integer::intValue).max().orElseThrow();
        assertTrue(worst < 8, "HashMap turns a bucket of 8 into a tree; worst bucket held " + worst);
    }

    @Test
    void equalBytesHashAlikeAndOrderUnsigned() {
        assertEquals(Bytes.of((byte) 1, (byte) 2), Bytes.fromHex("0102"));
        assertEquals(Bytes.of((byte) 1, (byte) 2).hashCode(), Bytes.fromHex("0102").hashCode());
        assertNotEquals(Bytes.fromHex("0102"), Bytes.fromHex("010200"));
        assertTrue(Bytes.fromHex("ff").compareTo(Bytes.fromHex("01")) > 0, "0xff sorts after 0x01");
    }
}
