package io.nftproxy.proxy.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.http.ProbeServer;
import io.nftproxy.proxy.source.ObjectStore;

/** Every series the Grafana dashboard in deploy/ queries is one the metrics port really serves. */
class DashboardTest {
    @Test
    void everyPanelQueriesAServedMetric() throws Exception {
        JsonNode dash = new ObjectMapper().readTree(Path.of("..", "deploy", "grafana-dashboard.json").toFile());
        Set<String> queried = new TreeSet<>();
        Pattern metric = Pattern.compile("\\b((?:kubeproxy|nftproxy)_[a-z_]+)\\b");
        for (JsonNode panel : dash.get("panels")) {
            assertTrue(panel.get("targets").size() > 0, panel.get("title").asText());
            for (JsonNode t : panel.get("targets")) {
                Matcher m = metric.matcher(t.get("expr").asText());
                while (m.find()) {
                    queried.add(m.group(1));
                }
            }
        }
        assertTrue(queried.size() >= 15, "the dashboard covers the metrics: " + queried);

        ProxyMetrics metrics = new ProxyMetrics(new ObjectStore("node-a"));
        metrics.healthz(200); // labelled counters appear with their first probe, as on a running proxy
        metrics.livez(200);
        try (ProbeServer server = new ProbeServer("metrics", ProbeServer.open(new InetSocketAddress("127.0.0.1", 0)),
                MetricsEndpoints.routes(metrics.registry(), "nftables", ProxyConfig.defaults("node-a")),
                null, ProbeServer.Limits.DEFAULT)) {
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.port() + "/metrics")).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            Set<String> served = new TreeSet<>();
            for (String line : r.body().split("\n")) {
                if (!line.startsWith("#") && !line.isBlank()) {
                    served.add(line.split("[{ ]", 2)[0]);
                }
            }
            Set<String> missing = new TreeSet<>(queried);
            missing.removeAll(served);
            assertEquals(Set.of(), missing, "queried by the dashboard but not served");
        }
    }
}
