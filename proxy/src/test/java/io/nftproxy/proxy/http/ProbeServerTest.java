package io.nftproxy.proxy.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.http.ProbeServer.Response;

/** The probe server's answers and bounds, with raw sockets as the misbehaving clients. */
class ProbeServerTest {
    static final ProbeServer.Limits TIGHT = new ProbeServer.Limits(16, Duration.ofMillis(300), Duration.ofSeconds(2), 1024, 1, 1);

    static ProbeServer server(ProbeServer.Limits limits, Map<String, ProbeServer.Handler> routes) throws IOException {
        return new ProbeServer("test", ProbeServer.open(new InetSocketAddress("127.0.0.1", 0)), routes, null, limits);
    }

    static Socket connect(ProbeServer s) throws IOException {
        Socket c = new Socket();
        c.connect(new InetSocketAddress("127.0.0.1", s.port()), 3000);
        c.setSoTimeout(5000);
        return c;
    }

    /** Sends raw bytes, returns everything the server sent before closing. */
    static String exchange(ProbeServer s, String raw) throws IOException {
        try (Socket c = connect(s)) {
            c.getOutputStream().write(raw.getBytes(StandardCharsets.ISO_8859_1));
            return new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void answersRoutesHeadAndErrors() throws Exception {
        try (ProbeServer s = server(ProbeServer.Limits.DEFAULT, Map.of("/ok", r -> Response.text(200, "text/plain", "fine " + r.query()),
                "/boom", r -> {
                    throw new IllegalStateException("handler bug");
                }))) {
            String ok = exchange(s, "GET /ok?x=1 HTTP/1.1\r\nHost: a\r\n\r\n");
            assertTrue(ok.startsWith("HTTP/1.1 200 OK\r\n"), ok);
            assertTrue(ok.contains("Content-Length: 8\r\n") && ok.endsWith("\r\n\r\nfine x=1"), ok);
            assertTrue(ok.contains("Connection: close"), ok);
            String head = exchange(s, "HEAD /ok HTTP/1.0\n\n");
            assertTrue(head.startsWith("HTTP/1.1 200 OK") && head.endsWith("\r\n\r\n"), "HEAD has no body: " + head);
            assertTrue(exchange(s, "GET /nope HTTP/1.1\r\n\r\n").startsWith("HTTP/1.1 404 "));
            assertTrue(exchange(s, "GARBAGE\r\n\r\n").startsWith("HTTP/1.1 400 "));
            assertTrue(exchange(s, "GET /boom HTTP/1.1\r\n\r\n").startsWith("HTTP/1.1 500 "));
            assertTrue(exchange(s, "GET /ok HTTP/1.1\r\nX: " + "y".repeat(10_000) + "\r\n\r\n").startsWith("HTTP/1.1 431 "),
                    "a request head over the limit is refused");
        }
    }

    @Test
    void aStalledClientIsDroppedAfterTheRequestTimeout() throws Exception {
        try (ProbeServer s = server(TIGHT, Map.of("/ok", r -> Response.text(200, "text/plain", "ok")));
             Socket c = connect(s)) {
            c.getOutputStream().write("GET /ok HTTP/1.1\r\nHo".getBytes(StandardCharsets.US_ASCII));
            InputStream in = c.getInputStream();
            assertEquals(-1, in.read(), "the server closes the connection (a read timeout here would throw instead)");
        }
    }

    @Test
    void atTheConnectionLimitTheOldestStalledClientMakesRoom() throws Exception {
        try (ProbeServer s = server(TIGHT, Map.of("/ok", r -> Response.text(200, "text/plain", "ok")))) {
            List<Socket> stalled = new ArrayList<>();
            try {
                for (int i = 0; i < 40; i++) {
                    Socket c = connect(s);
                    c.getOutputStream().write("GET /ok HT".getBytes(StandardCharsets.US_ASCII));
                    stalled.add(c);
                }
                assertTrue(exchange(s, "GET /ok HTTP/1.1\r\n\r\n").startsWith("HTTP/1.1 200 "),
                        "40 stalled clients over a limit of 16 do not lock out a prompt one");
                assertTrue(s.connections() <= 16, "connections are bounded: " + s.connections());
            } finally {
                for (Socket c : stalled) {
                    c.close();
                }
            }
        }
    }

    @Test
    void aFullHandlerPoolAnswers503AtOnce() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch entered = new CountDownLatch(1);
        try (ProbeServer s = server(TIGHT, Map.of("/slow", r -> {
            entered.countDown();
            release.await();
            return Response.text(200, "text/plain", "late");
        }))) {
            // One worker and a queue of one: the first request runs, one more may wait, the rest are refused.
            Socket first = connect(s);
            first.getOutputStream().write("GET /slow HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            entered.await();
            List<Socket> waiting = new ArrayList<>();
            String refused = null;
            for (int i = 0; i < 10 && refused == null; i++) {
                Socket c = connect(s);
                c.setSoTimeout(1000);
                c.getOutputStream().write("GET /slow HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                try {
                    refused = new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                    c.close();
                } catch (SocketTimeoutException queued) {
                    waiting.add(c);
                }
            }
            assertTrue(refused != null && refused.startsWith("HTTP/1.1 503 "), String.valueOf(refused));
            assertTrue(waiting.size() <= 1, "at most the queue's one request waits: " + waiting.size());
            release.countDown();
            waiting.add(first);
            for (Socket c : waiting) {
                c.setSoTimeout(5000);
                assertTrue(new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8).endsWith("late"));
                c.close();
            }
        }
    }
}
