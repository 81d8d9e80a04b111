package io.nftproxy.proxy.health;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.util.Map;
import java.util.function.IntConsumer;

import io.nftproxy.proxy.http.ProbeServer;
import io.nftproxy.proxy.http.ProbeServer.Response;

/**
 * kube-proxy's health endpoints: /healthz (and node eligibility) and /livez, with its JSON bodies,
 * on a server that stalled clients cannot block (see {@link ProbeServer}).
 */
public final class HealthServer implements AutoCloseable {
    private final ProbeServer server;

    /**
     * @param healthzCodes called with the status code of every /healthz answer (for
     *                     kubeproxy_proxy_healthz_total); {@code livezCodes} likewise
     */
    public HealthServer(InetSocketAddress at, HealthState state, IntConsumer healthzCodes, IntConsumer livezCodes)
            throws IOException {
        server = ProbeServer.bind("health", at, Map.of(
                "/healthz", req -> {
                    HealthState.Status s = state.status();
                    int code = s.healthzOk() ? 200 : 503;
                    healthzCodes.accept(code);
                    return Response.json(code, "{\"lastUpdated\": " + time(s.lastUpdated()) + ", \"currentTime\": "
                            + time(s.currentTime()) + ", \"nodeEligible\": " + s.nodeEligible() + "}");
                },
                "/livez", req -> {
                    HealthState.Status s = state.status();
                    int code = s.healthy() ? 200 : 503;
                    livezCodes.accept(code);
                    return Response.json(code, "{\"lastUpdated\": " + time(s.lastUpdated()) + ", \"currentTime\": "
                            + time(s.currentTime()) + "}");
                }), null);
    }

    static String time(Instant t) {
        return t == null ? "\"0001-01-01T00:00:00Z\"" : "\"" + t + "\"";
    }

    public int port() {
        return server.port();
    }

    @Override
    public void close() {
        server.close();
    }
}
