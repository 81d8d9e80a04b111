package io.nftproxy.proxy.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Inet;

/** An endpoint holds its address as bytes, not as an InetAddress: the same value as the record it was. */
class EndpointTest {
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"10.244.1.2", "0.0.0.0", "255.255.255.255", "128.0.0.1", "fd00:1::2", "::1", "2001:db8::ffff:1"})
    void holdsItsAddressAsTheSameValue(String literal) {
        InetAddress a = Inet.parse(literal);
        Endpoint e = Endpoint.builder(a, 8080).node("node-a").zone("zone-1").serving(false).terminating(true)
                .zoneHints(Set.of("zone-1")).nodeHints(Set.of("node-a")).build();
        assertEquals(a, e.address());
        assertArrayEquals(a.getAddress(), e.addressBytes());
        assertEquals(Bytes.ip(a), e.ip());
        assertEquals(IpFamily.of(a), e.family());
        assertEquals(8080, e.port());
        assertEquals("node-a", e.nodeName());
        assertEquals("zone-1", e.zone());
        assertTrue(e.ready());
        assertFalse(e.serving());
        assertTrue(e.terminating());
        assertEquals(Set.of("zone-1"), e.zoneHints());
        assertEquals(Set.of("node-a"), e.nodeHints());
        String host = a.getAddress().length == 4 ? literal : "[" + Inet.format(a) + "]";
        assertEquals(host + ":8080", e.hostPort());

        Endpoint same = Endpoint.builder(Inet.parse(literal), 8080).node("node-a").zone("zone-1").serving(false)
                .terminating(true).zoneHints(Set.of("zone-1")).nodeHints(Set.of("node-a")).build();
        assertEquals(same, e);
        assertEquals(same.hashCode(), e.hashCode());
        assertTrue(same.sameAddress(e));
        Endpoint moved = e.withPort(9090);
        assertEquals(9090, moved.port());
        assertEquals(a, moved.address());
        assertTrue(moved.sameAddress(e));
        assertNotEquals(e, moved);
        assertEquals(e, moved.withPort(8080));
    }

    @Test
    void differsByEveryPart() {
        Endpoint e = Endpoint.ready(Inet.parse("10.0.0.1"), 80, "n");
        assertNotEquals(e, Endpoint.ready(Inet.parse("10.0.0.2"), 80, "n"));
        assertFalse(e.sameAddress(Endpoint.ready(Inet.parse("10.0.0.2"), 80, "n")));
        // The same four bytes as the last of an IPv6 address are another address.
        assertNotEquals(e, Endpoint.ready(Inet.parse("::a00:1"), 80, "n"));
        assertNotEquals(e, Endpoint.ready(Inet.parse("10.0.0.1"), 81, "n"));
        assertNotEquals(e, Endpoint.ready(Inet.parse("10.0.0.1"), 80, "m"));
        assertNotEquals(e, Endpoint.builder(Inet.parse("10.0.0.1"), 80).node("n").ready(false).build());
        assertNotEquals(e, Endpoint.builder(Inet.parse("10.0.0.1"), 80).node("n").zone("z").build());
        assertNotEquals(e, Endpoint.builder(Inet.parse("10.0.0.1"), 80).node("n").zoneHints(Set.of("z")).build());
    }

    @Test
    void withoutAnAddressIsAnEndpointWhoseAddressIsNull() {
        Endpoint none = Endpoint.ready(null, 80, "n");
        assertNull(none.address());
        assertEquals(none, Endpoint.ready(null, 80, "n"));
        assertNotEquals(none, Endpoint.ready(Inet.parse("0.0.0.0"), 80, "n"));
        assertThrows(NullPointerException.class, none::ip);
        assertThrows(NullPointerException.class, none::addressBytes);
    }

    /** Port and conditions are held together: each reads back alone, over every combination and the port's range. */
    @Test
    void portAndConditionsReadBackApart() {
        InetAddress a = Inet.parse("10.244.1.2");
        for (int port : new int[] {0, 1, 8080, 65_535}) {
            for (int c = 0; c < 8; c++) {
                boolean ready = (c & 1) != 0;
                boolean serving = (c & 2) != 0;
                boolean terminating = (c & 4) != 0;
                Endpoint e = Endpoint.builder(a, port).node("node-a").ready(ready).serving(serving)
                        .terminating(terminating).build();
                String what = port + "/" + c;
                assertEquals(port, e.port(), what);
                assertEquals(ready, e.ready(), what);
                assertEquals(serving, e.serving(), what);
                assertEquals(terminating, e.terminating(), what);
                Endpoint moved = e.withPort(65_535 - port);
                assertEquals(65_535 - port, moved.port(), what);
                assertEquals(ready, moved.ready(), what);
                assertEquals(serving, moved.serving(), what);
                assertEquals(terminating, moved.terminating(), what);
                assertEquals(e, moved.withPort(port), what);
            }
        }
        assertNotEquals(Endpoint.ready(a, 80, "n"), Endpoint.builder(a, 80).node("n").serving(false).build());
        assertThrows(IllegalArgumentException.class, () -> Endpoint.ready(a, 65_536, "n"));
        assertThrows(IllegalArgumentException.class, () -> Endpoint.ready(a, -1, "n"));
    }
}
