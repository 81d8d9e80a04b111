package io.nftproxy.proxy.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.proxy.http.ProbeServer.Response;

/** /statusz and /flagz as the Kubernetes components' z-pages answer. */
class ZPagesTest {
    static final Instant STARTED = Instant.parse("2026-11-23T09:03:43.250Z");
    static final ZPages PAGES = new ZPages("kube-proxy", Map.of("v", "2", "config", "/var/lib/kube-proxy/config.conf",
            "hostname-override", "node-a"), STARTED, "nftproxy 0.1.0", "1.35");
    static final List<String> PATHS = List.of("/metrics", "/proxyMode", "/configz", "/statusz", "/flagz");

    @Test
    void statuszInText() {
        String text = PAGES.statuszText(Instant.parse("2026-11-23T10:05:02Z"), PATHS);
        assertEquals("kube-proxy statusz\n" + ZPages.WARNING + "\n\n"
                + "Started: Mon Nov 23 09:03:43 UTC 2026\n"
                + "Up: 1 hr 01 min 18 sec\n"
                + "Java version: " + Runtime.version() + "\n"
                + "Binary version: nftproxy 0.1.0\n"
                + "Emulation version: 1.35\n"
                + "Paths: /configz /flagz /metrics /proxyMode /statusz\n", text);
    }

    @Test
    void statuszStructured() {
        assertEquals("{\"kind\":\"Statusz\",\"apiVersion\":\"config.k8s.io/v1beta1\",\"metadata\":{\"name\":\"kube-proxy\"},"
                + "\"startTime\":\"2026-11-23T09:03:43Z\",\"uptimeSeconds\":3678,\"binaryVersion\":\"nftproxy 0.1.0\","
                + "\"emulationVersion\":\"1.35\",\"paths\":[\"/configz\",\"/flagz\",\"/metrics\",\"/proxyMode\",\"/statusz\"]}",
                PAGES.statuszJson(Instant.parse("2026-11-23T10:05:02Z"), PATHS));
    }

    @Test
    void flagzSortedByName() {
        assertEquals("kube-proxy flags\n" + ZPages.WARNING + "\n\nconfig=/var/lib/kube-proxy/config.conf\n"
                + "hostname-override=node-a\nv=2\n", PAGES.flagzText());
        assertEquals("{\"kind\":\"Flagz\",\"apiVersion\":\"config.k8s.io/v1beta1\",\"metadata\":{\"name\":\"kube-proxy\"},"
                + "\"flags\":{\"config\":\"/var/lib/kube-proxy/config.conf\",\"hostname-override\":\"node-a\",\"v\":\"2\"}}",
                PAGES.flagzJson());
    }

    @ParameterizedTest(name = "Accept: {0}")
    @CsvSource(delimiter = '|', nullValues = "none", value = {
            "none                                                     | 200 | text/plain; charset=utf-8",
            "text/plain                                               | 200 | text/plain; charset=utf-8",
            "*/*                                                      | 200 | text/plain; charset=utf-8",
            "application/json;v=v1beta1;g=config.k8s.io;as=Flagz      | 200 | application/json;v=v1beta1;g=config.k8s.io;as=Flagz",
            "application/json; g=config.k8s.io; v=v1beta1; as=Flagz   | 200 | application/json;v=v1beta1;g=config.k8s.io;as=Flagz",
            "application/json                                         | 406 | text/plain; charset=utf-8",
            "application/json;v=v1beta1;g=config.k8s.io;as=Statusz    | 406 | text/plain; charset=utf-8",
            "'application/json;v=v1alpha1;g=config.k8s.io;as=Flagz, text/plain' | 200 | text/plain; charset=utf-8",
            "text/html                                                | 200 | text/plain; charset=utf-8"})
    void theStructuredFormIsGivenOnlyWhenNamedExactly(String accept, int status, String type) {
        Response r = ZPages.negotiate(accept, "Flagz", () -> "text", () -> "{}");
        assertEquals(status, r.status(), new String(r.body(), StandardCharsets.UTF_8));
        assertEquals(type, r.contentType());
    }
}
