package io.nftproxy.proxy.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Go-style durations as kube-proxy takes them: "1s", "500ms", "1m30s", "2h". */
final class Durations {
    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)");

    private Durations() {
    }

    static Duration parse(String s) {
        if (s == null || s.isBlank()) {
            throw new IllegalArgumentException("empty duration");
        }
        String t = s.trim();
        if (t.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = PART.matcher(t);
        long nanos = 0;
        int pos = 0;
        while (m.find() && m.start() == pos) {
            double v = Double.parseDouble(m.group(1));
            long unit = switch (m.group(2)) {
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
        if (pos != t.length()) {
            throw new IllegalArgumentException("invalid duration '" + s + "' (use e.g. 1s, 500ms, 1m30s)");
        }
        return Duration.ofNanos(nanos);
    }
}
