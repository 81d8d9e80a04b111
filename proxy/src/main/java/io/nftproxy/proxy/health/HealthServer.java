package io.nftproxy.proxy.health;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.function.IntConsumer;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/** kube-proxy's health endpoints: /healthz (and node eligibility) and /livez, with its JSON bodies. */
public final class HealthServer implements AutoCloseable {
    private final HttpServer server;

    /**
     * @param healthzCodes called with the status code of every /healthz answer (for
     *                     kubeproxy_proxy_healthz_total); {@code livezCodes} likewise
     */
    public HealthServer(InetSocketAddress at, HealthState state, IntConsumer healthzCodes, IntConsumer livezCodes)
            throws IOException {
        server = HttpServer.create(at, 64);
        server.createContext("/healthz", ex -> {
            HealthState.Status s = state.status();
            int code = s.healthzOk() ? 200 : 503;
            healthzCodes.accept(code);
            reply(ex, code, "{\"lastUpdated\": " + time(s.lastUpdated()) + ", \"currentTime\": " + time(s.currentTime())
                    + ", \"nodeEligible\": " + s.nodeEligible() + "}");
        });
        server.createContext("/livez", ex -> {
            HealthState.Status s = state.status();
            int code = s.healthy() ? 200 : 503;
            livezCodes.accept(code);
            reply(ex, code, "{\"lastUpdated\": " + time(s.lastUpdated()) + ", \"currentTime\": " + time(s.currentTime()) + "}");
        });
        server.start();
    }

    static String time(Instant t) {
        return t == null ? "\"0001-01-01T00:00:00Z\"" : "\"" + t + "\"";
    }

    static void reply(HttpExchange ex, int code, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
        ex.sendResponseHeaders(code, body.length);
        try (OutputStream os = ex.getResponseBody()) {
            os.write(body);
        }
    }

    public int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
