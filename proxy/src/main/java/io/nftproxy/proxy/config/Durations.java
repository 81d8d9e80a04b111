package io.nftproxy.proxy.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Go-style durations as kube-proxy takes them: "1s", "500ms", "1m30s", "2h", "24h0m0s", "1.5us", "-1s". */
public final class Durations {
    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)");

    private Durations() {
    }

    public static Duration parse(String s) {
        if (s == null || s.isBlank()) {
            throw new IllegalArgumentException("empty duration");
        }
        String t = s.trim();
        boolean negative = t.startsWith("-");
        if (negative || t.startsWith("+")) {
            t = t.substring(1);
        }
        if (t.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = PART.matcher(t);
        long nanos = 0;
        int pos = 0;
        while (m.find() && m.start() == pos) {
            double v = Double.parseDouble(m.group(1));
            long unit = switch (m.group(2)) {
                case "ns" -> 1L;
                case "us", "\u00b5s", "\u03bcs" -> 1_000L;
                case "ms" -> 1_000_000L;
                case "s" -> 1_000_000_000L;
                case "m" -> 60_000_000_000L;
                default -> 3_600_000_000_000L;
            };
            double part = v * unit;
            // Go's time.Duration ends at about 2,562,047 h, as kube-proxy's flags do.
            if (part >= Long.MAX_VALUE || nanos + part >= Long.MAX_VALUE) {
                throw new IllegalArgumentException("duration '" + s + "' is out of range (at most 2562047h)");
            }
            nanos += (long) part;
            pos = m.end();
        }
        if (pos != t.length() || pos == 0) {
            throw new IllegalArgumentException("invalid duration '" + s + "' (use e.g. 1s, 500ms, 1m30s)");
        }
        return Duration.ofNanos(negative ? -nanos : nanos);
    }

    /** A duration as Go's time.Duration prints it (kube-proxy's /configz and config files): 24h0m0s, 1m30s, 1.5s, 500ms, 0s. */
    public static String format(Duration d) {
        if (d.isZero()) {
            return "0s";
        }
        if (d.isNegative()) {
            return "-" + format(d.negated());
        }
        if (d.compareTo(Duration.ofSeconds(1)) < 0) {
            long ns = d.toNanos();
            return ns % 1_000_000 == 0 ? ns / 1_000_000 + "ms" : ns % 1_000 == 0 ? ns / 1_000 + "\u00b5s" : ns + "ns";
        }
        long h = d.toHours();
        int m = d.toMinutesPart();
        String s = Integer.toString(d.toSecondsPart());
        if (d.toNanosPart() != 0) {
            s += ("." + String.format("%09d", d.toNanosPart())).replaceAll("0+$", "");
        }
        return h > 0 ? h + "h" + m + "m" + s + "s" : m > 0 ? m + "m" + s + "s" : s + "s";
    }
}
