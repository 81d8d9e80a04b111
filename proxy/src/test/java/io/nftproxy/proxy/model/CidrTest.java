package io.nftproxy.proxy.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

import io.nftproxy.netlink.nft.Inet;

/** CIDRs as kube-proxy's flags and Node specs give them: masked, ranges ending where they end, wrong ones named. */
class CidrTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "10.244.1.7/16,    10.244.0.0/16,  V4, 10.245.0.0",
            "10.96.0.10,       10.96.0.10/32,  V4, 10.96.0.11",
            "' 192.0.2.0/24 ', 192.0.2.0/24,   V4, 192.0.3.0",
            "fd00:10:96::1/112, fd00:10:96::/112, V6, fd00:10:96::1:0",
            "0.0.0.0/0,        0.0.0.0/0,      V4, ",
            "255.255.255.255/32, 255.255.255.255/32, V4, ",
    })
    void parsedMaskedAndBounded(String in, String printed, IpFamily family, String end) {
        Cidr c = Cidr.parse(in);
        assertEquals(printed, c.toString());
        assertEquals(family, c.family());
        Cidr.Range r = Cidr.merge(List.of(c)).get(0);
        assertEquals(c.network(), r.start());
        if (end == null) {
            assertNull(r.endExclusive(), "the range ends at the top of the address space");
        } else {
            assertEquals(Inet.parse(end), r.endExclusive());
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"10.0.0.0/33", "10.0.0.0/x", "10.0.0.0/-1", "fd00::/129", "not-an-ip/8", "10.0.0.300"})
    void refusedWithTheReason(String in) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Cidr.parse(in));
        assertTrue(e.getMessage() != null && !e.getMessage().isBlank());
    }

    @ParameterizedTest
    @NullSource
    void anAbsentCidrIsRefused(String in) {
        assertEquals("empty CIDR", assertThrows(IllegalArgumentException.class, () -> Cidr.parse(in)).getMessage());
    }

    @ParameterizedTest(name = "{1} in {0}: {2}")
    @CsvSource({
            "10.244.0.0/16, 10.244.255.1, true",
            "10.244.0.0/16, 10.245.0.1,   false",
            "10.244.0.0/16, fd00::1,      false",
            "fd00::/64,     fd00::abcd,   true",
    })
    void containsOnlyItsOwnFamilyAndRange(String cidr, String addr, boolean in) {
        assertEquals(in, Cidr.parse(cidr).contains(Inet.parse(addr)));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "10.0.0.0/8 10.1.0.0/16                 | 10.0.0.0-11.0.0.0",
            "10.0.1.0/24 10.0.0.0/24                | 10.0.0.0-10.0.2.0",
            "10.0.0.0/24 10.0.2.0/24                | 10.0.0.0-10.0.1.0 10.0.2.0-10.0.3.0",
            "192.168.0.0/16 10.0.0.0/8 10.0.0.0/8   | 10.0.0.0-11.0.0.0 192.168.0.0-192.169.0.0",
            "0.0.0.0/1 128.0.0.0/1                  | 0.0.0.0-",
            "fd00::/64 fd00:0:0:1::/64              | fd00:0:0:0:0:0:0:0-fd00:0:0:2:0:0:0:0"})
    void mergedIntoTheFewestRangesInOrder(String cidrs, String ranges) {
        List<Cidr> in = Arrays.stream(cidrs.trim().split("\\s+")).map(Cidr::parse).toList();
        String out = String.join(" ", Cidr.merge(in).stream().map(r -> r.start().getHostAddress() + "-"
                + (r.endExclusive() == null ? "" : r.endExclusive().getHostAddress())).toList());
        assertEquals(ranges.trim(), out);
    }

    /** Every address but loopback's: what NodePorts are served on when nothing narrows them. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "0.0.0.0/0               | 127.0.0.0/8  | 0.0.0.0-127.0.0.0 128.0.0.0-",
            "10.0.0.0/8              | 127.0.0.0/8  | 10.0.0.0-11.0.0.0",
            "127.0.0.0/7             | 127.0.0.0/8  | 126.0.0.0-127.0.0.0",
            "127.0.0.0/8 10.0.0.0/8  | 127.0.0.0/8  | 10.0.0.0-11.0.0.0",
            "::/0                    | ::1/128      | 0:0:0:0:0:0:0:0-0:0:0:0:0:0:0:1 0:0:0:0:0:0:0:2-",
            "::/0                    | 127.0.0.0/8  | 0:0:0:0:0:0:0:0-"})
    void mergedWithoutAHole(String cidrs, String hole, String ranges) {
        List<Cidr> in = Arrays.stream(cidrs.trim().split("\\s+")).map(Cidr::parse).toList();
        String out = String.join(" ", Cidr.merge(in, Cidr.parse(hole.trim())).stream().map(r -> r.start().getHostAddress()
                + "-" + (r.endExclusive() == null ? "" : r.endExclusive().getHostAddress())).toList());
        assertEquals(ranges.trim(), out);
    }

    @Test
    void twoFamiliesDoNotMerge() {
        assertThrows(IllegalArgumentException.class, () -> Cidr.merge(List.of(Cidr.parse("10.0.0.0/8"), Cidr.parse("fd00::/8"))));
        assertTrue(Cidr.merge(List.of()).isEmpty());
    }
}
