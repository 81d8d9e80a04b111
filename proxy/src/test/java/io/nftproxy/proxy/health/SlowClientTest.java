package io.nftproxy.proxy.health;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The attack of issue #10: clients that send part of a request and stall must not keep the
 * health endpoint from answering the kubelet's probes.
 */
class SlowClientTest {
    static final int PROBE_TIMEOUT_MS = 3000; // the kubelet's default probe timeout is 1 s; be generous

    /** One probe as the kubelet sends it; the status code, or -1 when it got no answer in time. */
    static int probe(int port, String path) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), PROBE_TIMEOUT_MS);
            s.setSoTimeout(PROBE_TIMEOUT_MS);
            OutputStream out = s.getOutputStream();
            out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: kube-probe/1.31\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            String head = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
            return Integer.parseInt(head.substring(9, 12));
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    @Test
    void stalledClientsDoNotBlockProbes() throws Exception {
        HealthState state = new HealthState(Clock.systemUTC(), Duration.ofSeconds(60));
        state.synced();
        try (HealthServer server = new HealthServer(new InetSocketAddress("127.0.0.1", 0), state, c -> { }, c -> { })) {
            List<Socket> stalled = new ArrayList<>();
            try {
                for (int i = 0; i < 200; i++) {
                    Socket s = new Socket();
                    s.connect(new InetSocketAddress("127.0.0.1", server.port()), PROBE_TIMEOUT_MS);
                    s.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: 127".getBytes(StandardCharsets.US_ASCII));
                    stalled.add(s);
                }
                int answered = 0;
                for (int i = 0; i < 8; i++) {
                    if (probe(server.port(), i % 2 == 0 ? "/healthz" : "/livez") == 200) {
                        answered++;
                    }
                }
                assertEquals(8, answered, "probes answered while 200 clients stall mid-request");
            } finally {
                for (Socket s : stalled) {
                    s.close();
                }
            }
        }
    }
}
