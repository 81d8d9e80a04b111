package io.nftproxy.proxy.metrics;

import java.io.IOException;
import java.io.StringWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;

import io.nftproxy.proxy.http.ProbeServer;
import io.nftproxy.proxy.http.ProbeServer.Response;

/**
 * The z-pages Kubernetes components serve for people debugging them ({@code ComponentStatusz},
 * {@code ComponentFlagz}, beta and on by default since 1.36): {@code /statusz} (start time,
 * uptime, versions, the other paths) and {@code /flagz} (the command line's flags and values),
 * as plain text, or as the structured {@code config.k8s.io/v1beta1} object when the Accept header
 * names it exactly. Where a Go component writes its Go version, this writes the Java runtime's.
 *
 * @param component        the name the pages give: kube-proxy when started with its command line
 * @param flags            flag name (without dashes) to value, as given; empty for flags not given
 * @param binaryVersion    this program's version
 * @param emulationVersion the kube-proxy release whose behaviour this follows, major.minor
 */
public record ZPages(String component, Map<String, String> flags, Instant started, String binaryVersion,
                     String emulationVersion) {
    static final String WARNING = "Warning: This endpoint is not meant to be machine parseable, has no formatting"
            + " compatibility guarantees and is for debugging purposes only.";
    private static final DateTimeFormatter GO_UNIX_DATE = DateTimeFormatter.ofPattern("EEE MMM d HH:mm:ss 'UTC' yyyy",
            Locale.ROOT).withZone(ZoneOffset.UTC);
    private static final String TEXT = "text/plain; charset=utf-8";

    public ZPages {
        flags = new TreeMap<>(flags);
    }

    /** For this process: started when the JVM started. */
    public static ZPages of(String component, Map<String, String> flags) {
        Instant started = ProcessHandle.current().info().startInstant().orElse(Instant.now());
        return new ZPages(component, flags, started, "nftproxy 0.1.0", "1.35");
    }

    /** {@code /statusz} and {@code /flagz}; {@code paths} are the port's other paths, for /statusz to list. */
    public Map<String, ProbeServer.Handler> routes(List<String> paths) {
        Map<String, ProbeServer.Handler> routes = new LinkedHashMap<>();
        routes.put("/statusz", req -> negotiate(req.header("accept"), "Statusz",
                () -> statuszText(Instant.now(), paths), () -> statuszJson(Instant.now(), paths)));
        routes.put("/flagz", req -> negotiate(req.header("accept"), "Flagz", this::flagzText, this::flagzJson));
        return routes;
    }

    /** What to answer for an Accept header: the structured object when named exactly, text otherwise, 406 for other JSON. */
    static Response negotiate(String accept, String kind, Supplier<String> text,
                              Supplier<String> json) {
        if (accept == null || accept.isBlank()) {
            return Response.text(200, TEXT, text.get());
        }
        boolean jsonAsked = false;
        for (String offer : accept.split(",")) {
            String[] parts = offer.trim().split(";");
            String type = parts[0].trim().toLowerCase(Locale.ROOT);
            Map<String, String> params = new TreeMap<>();
            for (int i = 1; i < parts.length; i++) {
                String[] kv = parts[i].trim().split("=", 2);
                if (kv.length == 2) {
                    params.put(kv[0].trim(), kv[1].trim());
                }
            }
            if (type.equals("application/json")) {
                jsonAsked = true;
                if ("v1beta1".equals(params.get("v")) && "config.k8s.io".equals(params.get("g")) && kind.equals(params.get("as"))) {
                    return Response.text(200, "application/json;v=v1beta1;g=config.k8s.io;as=" + kind, json.get());
                }
            } else if (type.equals("text/plain") || type.equals("text/*") || type.equals("*/*")) {
                return Response.text(200, TEXT, text.get());
            }
        }
        return jsonAsked
                ? Response.text(406, TEXT, "406 Not Acceptable: ask for application/json;v=v1beta1;g=config.k8s.io;as=" + kind + "\n")
                : Response.text(200, TEXT, text.get());
    }

    String statuszText(Instant now, List<String> paths) {
        long up = Math.max(0, Duration.between(started, now).getSeconds());
        return component + " statusz\n" + WARNING + "\n\n"
                + "Started: " + GO_UNIX_DATE.format(started) + "\n"
                + String.format(Locale.ROOT, "Up: %d hr %02d min %02d sec%n", up / 3600, up / 60 % 60, up % 60)
                + "Java version: " + Runtime.version() + "\n"
                + "Binary version: " + binaryVersion + "\n"
                + "Emulation version: " + emulationVersion + "\n"
                + "Paths: " + String.join(" ", sorted(paths)) + "\n";
    }

    String statuszJson(Instant now, List<String> paths) {
        return json(g -> {
            header(g, "Statusz");
            g.writeStringField("startTime", DateTimeFormatter.ISO_INSTANT.format(started.truncatedTo(ChronoUnit.SECONDS)));
            g.writeNumberField("uptimeSeconds", Math.max(0, Duration.between(started, now).getSeconds()));
            g.writeStringField("binaryVersion", binaryVersion);
            g.writeStringField("emulationVersion", emulationVersion);
            g.writeArrayFieldStart("paths");
            for (String p : sorted(paths)) {
                g.writeString(p);
            }
            g.writeEndArray();
        });
    }

    String flagzText() {
        StringBuilder sb = new StringBuilder(component + " flags\n" + WARNING + "\n\n");
        flags.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
        return sb.toString();
    }

    String flagzJson() {
        return json(g -> {
            header(g, "Flagz");
            g.writeObjectFieldStart("flags");
            for (Map.Entry<String, String> f : flags.entrySet()) {
                g.writeStringField(f.getKey(), f.getValue());
            }
            g.writeEndObject();
        });
    }

    private void header(JsonGenerator g, String kind) throws IOException {
        g.writeStringField("kind", kind);
        g.writeStringField("apiVersion", "config.k8s.io/v1beta1");
        g.writeObjectFieldStart("metadata");
        g.writeStringField("name", component);
        g.writeEndObject();
    }

    private static List<String> sorted(List<String> paths) {
        return paths.stream().sorted().distinct().toList();
    }

    private interface Body {
        void write(JsonGenerator g) throws IOException;
    }

    private static String json(Body body) {
        try {
            StringWriter out = new StringWriter();
            try (JsonGenerator g = new JsonFactory().createGenerator(out)) {
                g.writeStartObject();
                body.write(g);
                g.writeEndObject();
            }
            return out.toString();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
