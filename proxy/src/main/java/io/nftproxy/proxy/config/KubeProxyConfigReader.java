package io.nftproxy.proxy.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * Reads a KubeProxyConfiguration as kube-proxy does: every field of the newest
 * {@code kubeproxy.config.k8s.io/v1alpha1} known by name and type; a value of the wrong type is
 * an error naming the file and the field; zero values ({@code 0s}, {@code ""}, {@code null},
 * {@code 0}, as kubeadm renders every field it does not set) mean kube-proxy's default, as its
 * defaulting does; an unknown field is a warning (kube-proxy falls back to lenient decoding for
 * those). Every field is either acted on or, when given a value other than its zero value, named
 * in a warning saying why it does not apply here ({@link #FIELDS} is the table).
 */
public final class KubeProxyConfigReader {
    public static final String API_VERSION = "kubeproxy.config.k8s.io/v1alpha1";

    /** A configuration that cannot be used: the message names the file and the field. */
    public static final class InvalidConfigException extends IllegalArgumentException {
        public InvalidConfigException(String message) {
            super(message);
        }
    }

    /** The configuration read, and what to say about it at start-up (one line each). */
    public record Read(KubeProxyConfiguration config, List<String> warnings, List<String> notes) {
        public Read {
            warnings = List.copyOf(warnings);
            notes = List.copyOf(notes);
        }
    }

    enum Kind { STRING, BOOL, INT, FLOAT, DURATION, STRING_LIST, BOOL_MAP, ANY }

    /** How nftproxy treats a field: acted on, or (with the reason) not applicable. */
    record Field(Kind kind, String notApplicable) {
        static Field used(Kind k) {
            return new Field(k, null);
        }

        static Field na(Kind k, String why) {
            return new Field(k, why);
        }
    }

    /** Every field of KubeProxyConfiguration v1alpha1 (kube-proxy 1.32 to 1.37), by its path. */
    static final Map<String, Field> FIELDS = new LinkedHashMap<>();

    static {
        String ipvs = "ipvs mode is not supported (nftproxy programs nftables, or iptables as the reference)";
        String windows = "a Windows setting (kernelspace mode)";
        FIELDS.put("apiVersion", Field.used(Kind.STRING));
        FIELDS.put("kind", Field.used(Kind.STRING));
        FIELDS.put("featureGates", Field.used(Kind.BOOL_MAP));
        FIELDS.put("clientConnection.kubeconfig", Field.used(Kind.STRING));
        FIELDS.put("clientConnection.acceptContentTypes", Field.na(Kind.STRING,
                "the API client (fabric8) speaks JSON only"));
        FIELDS.put("clientConnection.contentType", Field.used(Kind.STRING)); // said as a note when protobuf is asked for
        FIELDS.put("clientConnection.qps", Field.used(Kind.FLOAT));
        FIELDS.put("clientConnection.burst", Field.used(Kind.INT));
        FIELDS.put("logging.format", Field.used(Kind.STRING));
        FIELDS.put("logging.verbosity", Field.used(Kind.INT));
        FIELDS.put("logging.flushFrequency", Field.used(Kind.ANY)); // every line is written at once
        FIELDS.put("logging.vmodule", Field.na(Kind.ANY, "per-file verbosity is a Go logging feature"));
        FIELDS.put("logging.options", Field.used(Kind.ANY)); // buffering and stream splitting: lines are written unbuffered
        FIELDS.put("hostnameOverride", Field.used(Kind.STRING));
        FIELDS.put("bindAddress", Field.used(Kind.STRING));
        FIELDS.put("healthzBindAddress", Field.used(Kind.STRING));
        FIELDS.put("metricsBindAddress", Field.used(Kind.STRING));
        FIELDS.put("bindAddressHardFail", Field.used(Kind.BOOL));
        FIELDS.put("enableProfiling", Field.na(Kind.BOOL, "pprof is Go's profiler (use JFR: jcmd PID JFR.start)"));
        FIELDS.put("showHiddenMetricsForVersion", Field.na(Kind.STRING, "no metric of nftproxy is hidden"));
        FIELDS.put("mode", Field.used(Kind.STRING));
        for (String section : new String[] {"iptables", "nftables"}) {
            FIELDS.put(section + ".masqueradeBit", Field.used(Kind.INT));
            FIELDS.put(section + ".masqueradeAll", Field.used(Kind.BOOL));
            FIELDS.put(section + ".syncPeriod", Field.used(Kind.DURATION));
            FIELDS.put(section + ".minSyncPeriod", Field.used(Kind.DURATION));
        }
        FIELDS.put("iptables.localhostNodePorts", Field.na(Kind.BOOL,
                "NodePorts on localhost are not served (as in kube-proxy's nftables mode)"));
        for (String f : new String[] {"syncPeriod", "minSyncPeriod", "tcpTimeout", "tcpFinTimeout", "udpTimeout"}) {
            FIELDS.put("ipvs." + f, Field.na(Kind.DURATION, ipvs));
        }
        FIELDS.put("ipvs.scheduler", Field.na(Kind.STRING, ipvs));
        FIELDS.put("ipvs.excludeCIDRs", Field.na(Kind.STRING_LIST, ipvs));
        FIELDS.put("ipvs.strictARP", Field.na(Kind.BOOL, ipvs));
        for (String f : new String[] {"networkName", "sourceVip", "rootHnsEndpointName"}) {
            FIELDS.put("winkernel." + f, Field.na(Kind.STRING, windows));
        }
        FIELDS.put("winkernel.enableDSR", Field.na(Kind.BOOL, windows));
        FIELDS.put("winkernel.forwardHealthCheckVip", Field.na(Kind.BOOL, windows));
        FIELDS.put("windowsRunAsService", Field.na(Kind.BOOL, windows));
        FIELDS.put("detectLocalMode", Field.used(Kind.STRING));
        FIELDS.put("detectLocal.bridgeInterface", Field.used(Kind.STRING));
        FIELDS.put("detectLocal.interfaceNamePrefix", Field.used(Kind.STRING));
        FIELDS.put("clusterCIDR", Field.used(Kind.STRING));
        FIELDS.put("nodePortAddresses", Field.used(Kind.STRING_LIST));
        FIELDS.put("oomScoreAdj", Field.used(Kind.INT));
        FIELDS.put("conntrack.maxPerCore", Field.used(Kind.INT));
        FIELDS.put("conntrack.min", Field.used(Kind.INT));
        FIELDS.put("conntrack.tcpEstablishedTimeout", Field.used(Kind.DURATION));
        FIELDS.put("conntrack.tcpCloseWaitTimeout", Field.used(Kind.DURATION));
        FIELDS.put("conntrack.tcpBeLiberal", Field.used(Kind.BOOL));
        FIELDS.put("conntrack.udpTimeout", Field.used(Kind.DURATION));
        FIELDS.put("conntrack.udpStreamTimeout", Field.used(Kind.DURATION));
        FIELDS.put("configSyncPeriod", Field.used(Kind.DURATION));
        FIELDS.put("portRange", Field.na(Kind.STRING, "unused since the userspace proxy went, in kube-proxy too"));
        FIELDS.put("serviceProxyName", Field.used(Kind.STRING)); // nftproxy's own (see README: beside kube-proxy)
    }

    private KubeProxyConfigReader() {
    }

    /** Reads {@code file}; errors name it. */
    public static Read read(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new InvalidConfigException("config file " + file + ": no such file");
        } catch (IOException e) {
            throw new InvalidConfigException("config file " + file + ": cannot be read: " + e.getMessage());
        }
        return parse(text, "config file " + file, Map.of());
    }

    /**
     * Reads a configuration's text. {@code origin} names it in errors and warnings ("config file
     * F", "the command line"); {@code labels} names fields as the reader knows them (the flag
     * that set a field, say), by field path.
     */
    public static Read parse(String text, String origin, Map<String, String> labels) {
        String name = origin;
        JsonNode root;
        try {
            root = text.isBlank() ? MissingNode.getInstance() : new ObjectMapper(new YAMLFactory()).readTree(text);
        } catch (IOException e) {
            throw new InvalidConfigException(name + " does not parse: "
                    + String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
        }
        if (root == null || root.isNull() || root.isMissingNode()) {
            root = MissingNode.getInstance();
        } else if (!root.isObject()) {
            throw new InvalidConfigException(name + " is not a KubeProxyConfiguration (not a mapping)");
        }
        Values v = new Values(name, labels);
        v.walk(root, "");
        return v.build();
    }

    /** The fields found, type-checked, and what was said about them. */
    private static final class Values {
        final String name;
        final Map<String, String> labels;
        final Map<String, JsonNode> given = new TreeMap<>();
        final List<String> warnings = new ArrayList<>();
        final List<String> notes = new ArrayList<>();

        Values(String name, Map<String, String> labels) {
            this.name = name;
            this.labels = labels;
        }

        /** A field as the reader wrote it: its path, or the flag that set it. */
        String label(String path) {
            return labels.getOrDefault(path, path);
        }

        void walk(JsonNode node, String prefix) {
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                String path = prefix + e.getKey();
                Field f = FIELDS.get(path);
                if (f != null) {
                    check(path, f, e.getValue());
                    given.put(path, e.getValue());
                    if (f.notApplicable() != null && !isZero(e.getValue())) {
                        warnings.add(name + ": " + label(path) + " does not apply to nftproxy and is ignored: "
                                + f.notApplicable());
                    }
                } else if (isSection(path)) {
                    if (e.getValue().isObject()) {
                        walk(e.getValue(), path + ".");
                    } else if (!e.getValue().isNull()) {
                        throw error(path, "expected a mapping", e.getValue());
                    }
                } else {
                    warnings.add(name + ": unknown field " + path + " (ignored)");
                }
            }
        }

        static boolean isSection(String path) {
            String p = path + ".";
            return FIELDS.keySet().stream().anyMatch(k -> k.startsWith(p));
        }

        void check(String path, Field f, JsonNode v) {
            if (v.isNull()) {
                return; // null is the zero value of every field
            }
            boolean ok = switch (f.kind()) {
                case STRING -> v.isTextual();
                case BOOL -> v.isBoolean();
                case INT -> v.isIntegralNumber() && v.canConvertToInt();
                case FLOAT -> v.isNumber();
                case DURATION -> v.isTextual() && durationOk(v.asText());
                case STRING_LIST -> v.isArray() && allText(v);
                case BOOL_MAP -> v.isObject() && allBool(v);
                case ANY -> true;
            };
            if (!ok) {
                throw error(path, switch (f.kind()) {
                    case STRING -> "expected a string";
                    case BOOL -> "expected true or false";
                    case INT -> "expected an integer";
                    case FLOAT -> "expected a number";
                    case DURATION -> "expected a duration such as 30s, 1m30s or 24h0m0s";
                    case STRING_LIST -> "expected a list of strings";
                    case BOOL_MAP -> "expected a mapping of names to true or false";
                    case ANY -> "";
                }, v);
            }
        }

        static boolean durationOk(String s) {
            try {
                Durations.parse(s);
                return true;
            } catch (IllegalArgumentException e) {
                return false;
            }
        }

        static boolean allText(JsonNode v) {
            for (JsonNode x : v) {
                if (!x.isTextual()) {
                    return false;
                }
            }
            return true;
        }

        static boolean allBool(JsonNode v) {
            for (JsonNode x : v) {
                if (!x.isBoolean()) {
                    return false;
                }
            }
            return true;
        }

        static boolean isZero(JsonNode v) {
            return v.isNull() || v.isMissingNode() || (v.isTextual() && (v.asText().isEmpty() || zeroDuration(v.asText())))
                    || (v.isBoolean() && !v.asBoolean()) || (v.isNumber() && v.asDouble() == 0)
                    || ((v.isArray() || v.isObject()) && v.isEmpty());
        }

        static boolean zeroDuration(String s) {
            return durationOk(s) && Durations.parse(s).isZero();
        }

        InvalidConfigException error(String path, String expected, JsonNode got) {
            return new InvalidConfigException(name + ": " + label(path) + ": " + expected + ", not " + got);
        }

        String str(String path) {
            JsonNode v = given.get(path);
            return v == null || v.isNull() ? "" : v.asText();
        }

        /** An integer, or null when absent or null (a pointer field in kube-proxy: null means the default). */
        Integer intOrNull(String path) {
            JsonNode v = given.get(path);
            return v == null || v.isNull() ? null : v.asInt();
        }

        int intOr(String path, int zeroMeans) {
            Integer i = intOrNull(path);
            return i == null || i == 0 ? zeroMeans : i;
        }

        boolean bool(String path) {
            JsonNode v = given.get(path);
            return v != null && v.asBoolean();
        }

        /** A duration; absent, null and zero all mean {@code zeroMeans}. */
        Duration duration(String path, Duration zeroMeans) {
            Duration d = durationOrNull(path);
            return d == null || d.isZero() ? zeroMeans : d;
        }

        Duration durationOrNull(String path) {
            JsonNode v = given.get(path);
            return v == null || v.isNull() ? null : Durations.parse(v.asText());
        }

        Read build() {
            String apiVersion = str("apiVersion");
            if (!apiVersion.isEmpty() && !apiVersion.equals(API_VERSION)) {
                throw new InvalidConfigException(name + ": apiVersion " + apiVersion + " is not " + API_VERSION);
            }
            String kind = str("kind");
            if (!kind.isEmpty() && !kind.equals("KubeProxyConfiguration")) {
                throw new InvalidConfigException(name + " is a " + kind + ", not a KubeProxyConfiguration");
            }
            String mode = str("mode");
            switch (mode) {
                case "" -> {
                    mode = "nftables";
                    if (given.containsKey("mode")) {
                        notes.add(name + ": mode \"\" means nftables here (kube-proxy's own default is iptables)");
                    }
                }
                case "nftables", "iptables" -> { }
                case "ipvs", "kernelspace" -> throw new InvalidConfigException(name + ": " + label("mode") + " " + mode
                        + " is not supported: nftproxy runs nftables (or iptables, as the reference)");
                default -> throw new InvalidConfigException(name + ": unknown " + label("mode") + " '" + mode
                        + "' (expected nftables or iptables)");
            }
            String section = mode.equals("iptables") ? "iptables." : "nftables.";
            KubeProxyConfiguration.Sync sync = new KubeProxyConfiguration.Sync(bool(section + "masqueradeAll"),
                    intOrNull(section + "masqueradeBit") == null ? 14 : intOrNull(section + "masqueradeBit"),
                    duration(section + "syncPeriod", Duration.ofSeconds(30)),
                    duration(section + "minSyncPeriod", Duration.ofSeconds(1)));
            String other = mode.equals("iptables") ? "nftables." : "iptables.";
            for (String f : List.of("masqueradeAll", "masqueradeBit", "syncPeriod", "minSyncPeriod")) {
                if (given.containsKey(other + f) && !isZero(given.get(other + f))) {
                    warnings.add(name + ": " + label(other + f) + " is ignored in " + mode + " mode (" + section + f
                            + " applies)");
                }
            }
            String bind = str("bindAddress");
            boolean v6 = bind.contains(":");
            String healthz = withPort(str("healthzBindAddress"), v6 ? "[::]" : "0.0.0.0", 10256);
            String metrics = withPort(str("metricsBindAddress"), v6 ? "[::1]" : "127.0.0.1", 10249);
            List<String> cidrs = new ArrayList<>();
            for (String c : str("clusterCIDR").split(",")) {
                if (!c.isBlank()) {
                    cidrs.add(c.trim());
                }
            }
            List<String> npa = new ArrayList<>();
            JsonNode n = given.get("nodePortAddresses");
            if (n != null && n.isArray()) {
                n.forEach(x -> npa.add(x.asText()));
            }
            Map<String, Boolean> gates = new TreeMap<>();
            JsonNode g = given.get("featureGates");
            if (g != null && g.isObject()) {
                g.fields().forEachRemaining(e -> gates.put(e.getKey(), e.getValue().asBoolean()));
            }
            String contentType = str("clientConnection.contentType");
            if (contentType.isEmpty()) {
                contentType = "application/vnd.kubernetes.protobuf";
            } else if (!contentType.startsWith("application/json")) {
                notes.add(name + ": " + label("clientConnection.contentType") + " " + contentType
                        + ": the API client (fabric8) speaks JSON only; using application/json");
            }
            float qps = given.containsKey("clientConnection.qps") && given.get("clientConnection.qps").asDouble() != 0
                    ? (float) given.get("clientConnection.qps").asDouble() : 5f;
            Integer oom = intOrNull("oomScoreAdj");
            KubeProxyConfiguration.Conntrack ct = new KubeProxyConfiguration.Conntrack(
                    intOrNull("conntrack.maxPerCore") == null ? 32 * 1024 : intOrNull("conntrack.maxPerCore"),
                    intOrNull("conntrack.min") == null ? 128 * 1024 : intOrNull("conntrack.min"),
                    durationOrNull("conntrack.tcpEstablishedTimeout") == null ? Duration.ofHours(24)
                            : durationOrNull("conntrack.tcpEstablishedTimeout"),
                    durationOrNull("conntrack.tcpCloseWaitTimeout") == null ? Duration.ofHours(1)
                            : durationOrNull("conntrack.tcpCloseWaitTimeout"),
                    bool("conntrack.tcpBeLiberal"),
                    duration("conntrack.udpTimeout", Duration.ZERO), duration("conntrack.udpStreamTimeout", Duration.ZERO));
            String format = str("logging.format");
            KubeProxyConfiguration c = new KubeProxyConfiguration(mode, str("hostnameOverride"), bind.isEmpty() ? "0.0.0.0" : bind,
                    healthz, metrics, bool("bindAddressHardFail"),
                    new KubeProxyConfiguration.ClientConnection(str("clientConnection.kubeconfig"), contentType,
                            str("clientConnection.acceptContentTypes"), qps, intOr("clientConnection.burst", 10)),
                    cidrs, npa, str("detectLocalMode").isEmpty() ? "ClusterCIDR" : str("detectLocalMode"),
                    str("detectLocal.bridgeInterface"), str("detectLocal.interfaceNamePrefix"), sync,
                    duration("configSyncPeriod", Duration.ofMinutes(15)), oom == null ? -999 : oom, ct, gates,
                    format.isEmpty() ? "text" : format, intOr("logging.verbosity", 0), str("serviceProxyName"));
            validate(c);
            return new Read(c, warnings, notes);
        }

        /** kube-proxy's validation of what it defaulted, naming the field. */
        void validate(KubeProxyConfiguration c) {
            String section = c.mode().equals("iptables") ? "iptables." : "nftables.";
            if (c.sync().syncPeriod().isNegative()) {
                throw invalid(section + "syncPeriod", "must be greater than 0");
            }
            if (c.sync().minSyncPeriod().isNegative()) {
                throw invalid(section + "minSyncPeriod", "must be greater than or equal to 0");
            }
            if (c.sync().minSyncPeriod().compareTo(c.sync().syncPeriod()) > 0) {
                throw invalid(section + "minSyncPeriod", "must be less than or equal to " + section + "syncPeriod");
            }
            if (c.sync().masqueradeBit() < 0 || c.sync().masqueradeBit() > 31) {
                throw invalid(section + "masqueradeBit", "must be in [0, 31], not " + c.sync().masqueradeBit());
            }
            if (c.configSyncPeriod().isNegative()) {
                throw invalid("configSyncPeriod", "must be greater than 0");
            }
            if (c.oomScoreAdj() < -1000 || c.oomScoreAdj() > 1000) {
                throw invalid("oomScoreAdj", "must be in [-1000, 1000], not " + c.oomScoreAdj());
            }
            if (c.conntrack().maxPerCore() < 0) {
                throw invalid("conntrack.maxPerCore", "must be greater than or equal to 0");
            }
            if (c.conntrack().min() < 0) {
                throw invalid("conntrack.min", "must be greater than or equal to 0");
            }
            for (String t : List.of("tcpEstablishedTimeout", "tcpCloseWaitTimeout", "udpTimeout", "udpStreamTimeout")) {
                Duration d = durationOrNull("conntrack." + t);
                if (d != null && d.isNegative()) {
                    throw invalid("conntrack." + t, "must be greater than or equal to 0");
                }
            }
            if (c.clientConnection().burst() < 0) {
                throw invalid("clientConnection.burst", "must be greater than or equal to 0");
            }
            if (c.clusterCIDRs().size() > 2) {
                throw invalid("clusterCIDR", "at most two CIDRs (one per IP family), not " + c.clusterCIDRs().size());
            }
            if (!c.loggingFormat().equals("text") && !c.loggingFormat().equals("json")) {
                throw invalid("logging.format", "expected text or json, not '" + c.loggingFormat() + "'");
            }
            if (c.verbosity() < 0) {
                throw invalid("logging.verbosity", "must not be negative");
            }
        }

        InvalidConfigException invalid(String path, String why) {
            return new InvalidConfigException(name + ": " + label(path) + " " + why);
        }

        /** kube-proxy's defaulting of a bind address: empty means host:port, a bare host gets the port. */
        static String withPort(String address, String defaultHost, int port) {
            if (address.isEmpty()) {
                return defaultHost + ":" + port;
            }
            boolean hasPort = address.startsWith("[") ? address.contains("]:") : address.indexOf(':') >= 0
                    && address.indexOf(':') == address.lastIndexOf(':');
            return hasPort ? address : (address.contains(":") && !address.startsWith("[") ? "[" + address + "]" : address) + ":" + port;
        }
    }
}
