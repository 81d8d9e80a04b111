package io.nftproxy.proxy.metrics;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.common.TextFormat;

import io.nftproxy.proxy.config.LocalDetection;
import io.nftproxy.proxy.config.Durations;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.http.ProbeServer;
import io.nftproxy.proxy.http.ProbeServer.Response;

/**
 * What the metrics port serves, as kube-proxy's does: {@code /metrics} (Prometheus text, or
 * OpenMetrics when the scraper asks for it), {@code /proxyMode} (the mode, plain text) and
 * {@code /configz} (the effective configuration as JSON, under the key of kube-proxy's
 * configuration group), and the z-pages {@code /statusz} and {@code /flagz} ({@link ZPages}).
 */
public final class MetricsEndpoints {
    private MetricsEndpoints() {
    }

    public static Map<String, ProbeServer.Handler> routes(CollectorRegistry registry, String mode, ProxyConfig cfg) {
        return routes(registry, mode, cfg, ZPages.of("nftproxy", Map.of()));
    }

    /** The same, and the z-pages {@code /statusz} and {@code /flagz}. */
    public static Map<String, ProbeServer.Handler> routes(CollectorRegistry registry, String mode, ProxyConfig cfg,
                                                          ZPages zpages) {
        Map<String, ProbeServer.Handler> routes = new LinkedHashMap<>();
        routes.put("/metrics", req -> {
            String type = TextFormat.chooseContentType(req.header("accept"));
            return new Response(200, type, scrape(registry, type).getBytes(StandardCharsets.UTF_8));
        });
        routes.put("/proxyMode", req -> Response.text(200, "text/plain; charset=utf-8", mode));
        String configz = configz(mode, cfg);
        routes.put("/configz", req -> Response.json(200, configz));
        List<String> paths = new ArrayList<>(routes.keySet());
        paths.addAll(List.of("/statusz", "/flagz"));
        routes.putAll(zpages.routes(paths));
        return routes;
    }

    /**
     * The registry's series in the format of {@code contentType} (one of {@link TextFormat}'s),
     * without the client's {@code _created} series: kube-proxy serves none, and a scrape of
     * every counter and histogram twice over would only grow the text.
     */
    public static String scrape(CollectorRegistry registry, String contentType) {
        StringWriter w = new StringWriter(1 << 16);
        try {
            TextFormat.writeFormat(contentType, w, registry.filteredMetricFamilySamples(name -> !name.endsWith("_created")));
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return w.toString();
    }

    /** The configuration in KubeProxyConfiguration's field names, where it has them. */
    static String configz(String mode, ProxyConfig cfg) {
        try {
            StringWriter out = new StringWriter();
            try (JsonGenerator g = new JsonFactory().createGenerator(out)) {
                g.writeStartObject();
                g.writeObjectFieldStart("kubeproxy.config.k8s.io");
                g.writeStringField("mode", mode);
                g.writeStringField("hostnameOverride", cfg.hostname());
                g.writeStringField("clusterCIDR", join(cfg.clusterCIDRs()));
                g.writeStringField("detectLocalMode", cfg.localDetection().mode().configName);
                g.writeObjectFieldStart("detectLocal");
                LocalDetection.Mode m = cfg.localDetection().mode();
                g.writeStringField("bridgeInterface", m == LocalDetection.Mode.BRIDGE_INTERFACE
                        ? cfg.localDetection().interfaceName() : "");
                g.writeStringField("interfaceNamePrefix", m == LocalDetection.Mode.INTERFACE_NAME_PREFIX
                        ? cfg.localDetection().interfaceName() : "");
                g.writeEndObject();
                g.writeArrayFieldStart("nodePortAddresses");
                if (cfg.nodePortAddresses().isEmpty()) {
                    g.writeString("primary");
                }
                for (Object c : cfg.nodePortAddresses()) {
                    g.writeString(c.toString());
                }
                g.writeEndArray();
                g.writeObjectFieldStart(mode);
                g.writeBooleanField("masqueradeAll", cfg.masqueradeAll());
                g.writeNumberField("masqueradeBit", cfg.masqueradeBit());
                g.writeStringField("minSyncPeriod", Durations.format(cfg.minSyncPeriod()));
                g.writeStringField("syncPeriod", Durations.format(cfg.syncPeriod()));
                g.writeEndObject();
                g.writeObjectFieldStart("nftproxy");
                g.writeStringField("serviceCIDRs", join(cfg.serviceCIDRs()));
                g.writeStringField("nodeIPs", cfg.nodeIPs().stream().map(a -> a.getHostAddress()).collect(Collectors.joining(",")));
                g.writeStringField("table", cfg.table());
                g.writeEndObject();
                g.writeEndObject();
                g.writeEndObject();
            }
            return out.toString();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String join(List<?> l) {
        return l.stream().map(Object::toString).collect(Collectors.joining(","));
    }
}
