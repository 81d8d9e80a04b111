package io.nftproxy.tools.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * kube-proxy's iptables-mode partial sync on {@code iptables-restore --noflush} input (as rendered
 * by {@link io.nftproxy.proxy.iptables.IptablesRenderer}): the top-level chains are always written
 * whole; per-service chains (KUBE-SVC-, -SVL-, -EXT-, -FW-, -SEP-) only when they changed; chains
 * that are gone are declared (flushed) and deleted.
 */
public final class IptablesLayout {
    private IptablesLayout() {
    }

    /** table to chain to its "-A" lines, in order. */
    static Map<String, Map<String, List<String>>> parse(String restore) {
        Map<String, Map<String, List<String>>> out = new LinkedHashMap<>();
        Map<String, List<String>> table = null;
        for (String line : restore.split("\n")) {
            if (line.startsWith("*")) {
                table = out.computeIfAbsent(line.substring(1), k -> new LinkedHashMap<>());
            } else if (line.startsWith(":") && table != null) {
                table.computeIfAbsent(line.substring(1, line.indexOf(' ')), k -> new ArrayList<>());
            } else if (line.startsWith("-A ") && table != null) {
                String chain = line.substring(3, line.indexOf(' ', 3));
                table.computeIfAbsent(chain, k -> new ArrayList<>()).add(line);
            }
        }
        return out;
    }

    static boolean serviceChain(String c) {
        return c.startsWith("KUBE-SVC-") || c.startsWith("KUBE-SVL-") || c.startsWith("KUBE-EXT-") || c.startsWith("KUBE-FW-")
                || c.startsWith("KUBE-SEP-");
    }

    public static String delta(String before, String after) {
        Map<String, Map<String, List<String>>> a = parse(before);
        Map<String, Map<String, List<String>>> b = parse(after);
        StringBuilder sb = new StringBuilder();
        for (String table : b.keySet()) {
            Map<String, List<String>> was = a.getOrDefault(table, Map.of());
            Map<String, List<String>> now = b.get(table);
            StringBuilder decl = new StringBuilder();
            StringBuilder rules = new StringBuilder();
            now.forEach((chain, lines) -> {
                if (!serviceChain(chain) || !lines.equals(was.get(chain))) {
                    decl.append(':').append(chain).append(" - [0:0]\n");
                    lines.forEach(l -> rules.append(l).append('\n'));
                }
            });
            StringBuilder gone = new StringBuilder();
            was.keySet().forEach(chain -> {
                if (!now.containsKey(chain)) {
                    decl.append(':').append(chain).append(" - [0:0]\n");
                    gone.append("-X ").append(chain).append('\n');
                }
            });
            sb.append('*').append(table).append('\n').append(decl).append(rules).append(gone).append("COMMIT\n");
        }
        return sb.toString();
    }
}
