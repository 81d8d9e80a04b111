package io.nftproxy.proxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** kube-proxy's bind address forms, and each wrong one refused naming the flag. */
class BindAddressTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "127.0.0.1:10249, 127.0.0.1, 10249",
            "0.0.0.0:10256,   0.0.0.0,   10256",
            ":10256,          0.0.0.0,   10256",
            "'[::1]:10249',   0:0:0:0:0:0:0:1, 10249",
            "'[::]:0',        0:0:0:0:0:0:0:0, 0",
    })
    void acceptsHostAndPort(String in, String host, int port) {
        InetSocketAddress a = BindAddress.parse(in, "--metrics-bind-address");
        assertEquals(host, a.getAddress().getHostAddress());
        assertEquals(port, a.getPort());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "10249,             is not host:port",
            "127.0.0.1:http,    invalid port",
            "127.0.0.1:65536,   port out of range",
            "127.0.0.1:-1,      port out of range",
            "localhost:10249,   localhost",
    })
    void refusesWhatIsNotAnAddressAndPort(String in, String why) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BindAddress.parse(in, "--healthz-bind-address"));
        assertTrue(e.getMessage().contains(why), e.getMessage());
        assertTrue(e.getMessage().startsWith("--healthz-bind-address '" + in + "'"), e.getMessage());
    }

    @ParameterizedTest(name = "''{0}''")
    @CsvSource(value = {"''", "'  '"})
    void emptyTurnsTheServerOff(String in) {
        assertTrue(BindAddress.isOff(in));
        assertFalse(BindAddress.isOff("127.0.0.1:1"));
    }
}
