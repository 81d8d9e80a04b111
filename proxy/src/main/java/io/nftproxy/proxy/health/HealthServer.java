package io.nftproxy.proxy.health;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
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
                    return Response.json(code, body(s, code, true));
                },
                "/livez", req -> {
                    HealthState.Status s = state.status();
                    int code = s.healthy() ? 200 : 503;
                    livezCodes.accept(code);
                    return Response.json(code, body(s, code, false));
                }), null);
    }

    /**
     * kube-proxy's body, as its {@code json.Marshal} of {@code ProxyHealth} writes it: compact, in
     * field order, no trailing newline. {@code lastUpdated} is the time of the answer when healthy
     * (kube-proxy's), else the last successful sync (Go's zero time before any); {@code nodeEligible}
     * on /healthz only; {@code status} per IP family once a sync has succeeded (each family's proxier
     * in kube-proxy; here one sync programs both, so both say the same).
     */
    static String body(HealthState.Status s, int code, boolean healthz) {
        StringBuilder b = new StringBuilder("{\"lastUpdated\":")
                .append(time(code == 200 ? s.currentTime() : s.lastUpdated()))
                .append(",\"currentTime\":").append(time(s.currentTime()));
        if (healthz) {
            b.append(",\"nodeEligible\":").append(s.nodeEligible());
        }
        b.append(",\"healthy\":").append(s.healthy());
        if (s.lastUpdated() != null) {
            b.append(",\"status\":{");
            for (String family : new String[] {"IPv4", "IPv6"}) {
                b.append(family.equals("IPv4") ? "" : ",").append('"').append(family).append("\":{\"lastUpdated\":")
                        .append(time(s.lastUpdated())).append(",\"healthy\":").append(s.healthy()).append('}');
            }
            b.append('}');
        }
        return b.append('}').toString();
    }

    /** A time as Go's JSON writes it: RFC 3339 with the nanoseconds, trailing zeros dropped; Go's zero time for none. */
    static String time(Instant t) {
        if (t == null) {
            return "\"0001-01-01T00:00:00Z\"";
        }
        String whole = DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(t.atOffset(ZoneOffset.UTC).withNano(0).toLocalDateTime());
        String nanos = t.getNano() == 0 ? "" : ("." + String.format("%09d", t.getNano())).replaceAll("0+$", "");
        return "\"" + whole + nanos + "Z\"";
    }

    public int port() {
        return server.port();
    }

    @Override
    public void close() {
        server.close();
    }
}
