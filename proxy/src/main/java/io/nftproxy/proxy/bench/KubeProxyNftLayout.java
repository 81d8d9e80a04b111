package io.nftproxy.proxy.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;

/**
 * kube-proxy's nftables-mode layout for the benchmark's services, as nft text: a verdict map from
 * service IP . protocol . port (and one from NodePort) to a chain per service, whose anonymous
 * {@code numgen random mod k vmap} jumps to a chain per endpoint that marks hairpin traffic and
 * DNATs. A full sync loads it whole; a partial sync, as kube-proxy's does, flushes and refills
 * only the chains that changed, creates and deletes chains, and edits the maps' elements.
 * (Session affinity and the Local traffic policies are not modelled; the generated services have
 * neither.)
 */
public final class KubeProxyNftLayout {
    public static final String TABLE = "kube-proxy-layout";

    /** Chains by name (each its rule lines, in order) and the two maps' elements (key to verdict). */
    public record Layout(Map<String, List<String>> chains, Map<String, String> serviceIps, Map<String, String> nodePorts) {
    }

    private KubeProxyNftLayout() {
    }

    public static Layout of(ProxyState state) {
        Map<String, List<String>> chains = new LinkedHashMap<>();
        Map<String, String> ips = new LinkedHashMap<>();
        Map<String, String> nodePorts = new LinkedHashMap<>();
        chains.put("mark-for-masquerade", List.of("meta mark set meta mark | 0x4000"));
        for (ServicePort svc : state.services().values()) {
            String name = svc.id().namespace() + "/" + svc.id().name() + "/tcp/" + svc.id().port();
            String ip = svc.clusterIPs().get(0).getHostAddress();
            List<Endpoint> eps = state.endpointsOf(svc.id());
            List<String> rules = new ArrayList<>();
            rules.add("ip daddr " + ip + " tcp dport " + svc.port() + " ip saddr != 10.128.0.0/9 jump mark-for-masquerade");
            if (!eps.isEmpty()) {
                StringBuilder vmap = new StringBuilder("numgen random mod " + eps.size() + " vmap { ");
                for (int i = 0; i < eps.size(); i++) {
                    vmap.append(i == 0 ? "" : ", ").append(i).append(" : goto endpoint-").append(name).append("__")
                            .append(eps.get(i).address().getHostAddress());
                }
                rules.add(vmap.append(" }").toString());
            }
            chains.put("service-" + name, rules);
            for (Endpoint e : eps) {
                String ea = e.address().getHostAddress();
                chains.put("endpoint-" + name + "__" + ea, List.of("ip saddr " + ea + " jump mark-for-masquerade",
                        "meta l4proto tcp dnat to " + ea + ":" + e.port()));
            }
            ips.put(ip + " . tcp . " + svc.port(), "goto service-" + name);
            if (svc.nodePort() != 0) {
                nodePorts.put("tcp . " + svc.nodePort(), "goto service-" + name);
            }
        }
        return new Layout(chains, ips, nodePorts);
    }

    /** The whole table, replacing any earlier one in the same transaction. */
    public static String full(Layout l) {
        StringBuilder sb = new StringBuilder("table ip " + TABLE + "\ndelete table ip " + TABLE + "\ntable ip " + TABLE + " {\n");
        l.chains().forEach((name, rules) -> {
            sb.append("\tchain ").append(quote(name)).append(" {\n");
            rules.forEach(r -> sb.append("\t\t").append(r).append('\n'));
            sb.append("\t}\n");
        });
        sb.append("\tmap service-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n");
        elements(sb, l.serviceIps());
        sb.append("\t}\n\tmap service-nodeports {\n\t\ttype inet_proto . inet_service : verdict\n");
        elements(sb, l.nodePorts());
        sb.append("\t}\n\tchain nat-prerouting {\n\t\ttype nat hook prerouting priority -100; policy accept;\n"
                + "\t\tip daddr . meta l4proto . th dport vmap @service-ips\n"
                + "\t\tfib daddr type local meta l4proto . th dport vmap @service-nodeports\n\t}\n}\n");
        return sb.toString();
    }

    private static void elements(StringBuilder sb, Map<String, String> m) {
        if (m.isEmpty()) {
            return;
        }
        sb.append("\t\telements = { ");
        boolean first = true;
        for (Map.Entry<String, String> e : m.entrySet()) {
            sb.append(first ? "" : ", ").append(e.getKey()).append(" : ").append(quoteVerdict(e.getValue()));
            first = false;
        }
        sb.append(" }\n");
    }

    /**
     * What kube-proxy's partial sync sends for the change from {@code a} to {@code b}: new chains
     * added, changed chains flushed and refilled, map elements replaced, then chains no longer
     * referenced deleted. Unchanged chains are not mentioned.
     */
    public static String delta(Layout a, Layout b) {
        StringBuilder sb = new StringBuilder();
        String t = "ip " + TABLE + " ";
        b.chains().forEach((name, rules) -> {
            if (!a.chains().containsKey(name)) {
                sb.append("add chain ").append(t).append(quote(name)).append('\n');
            }
        });
        b.chains().forEach((name, rules) -> {
            if (!rules.equals(a.chains().get(name))) {
                sb.append("flush chain ").append(t).append(quote(name)).append('\n');
                rules.forEach(r -> sb.append("add rule ").append(t).append(quote(name)).append(' ').append(r).append('\n'));
            }
        });
        mapDelta(sb, t + "service-ips", a.serviceIps(), b.serviceIps());
        mapDelta(sb, t + "service-nodeports", a.nodePorts(), b.nodePorts());
        a.chains().forEach((name, rules) -> {
            if (!b.chains().containsKey(name)) {
                sb.append("flush chain ").append(t).append(quote(name)).append('\n');
            }
        });
        a.chains().forEach((name, rules) -> {
            if (!b.chains().containsKey(name)) {
                sb.append("delete chain ").append(t).append(quote(name)).append('\n');
            }
        });
        return sb.toString();
    }

    private static void mapDelta(StringBuilder sb, String map, Map<String, String> a, Map<String, String> b) {
        a.forEach((k, v) -> {
            if (!v.equals(b.get(k))) {
                sb.append("delete element ").append(map).append(" { ").append(k).append(" }\n");
            }
        });
        b.forEach((k, v) -> {
            if (!v.equals(a.get(k))) {
                sb.append("add element ").append(map).append(" { ").append(k).append(" : ").append(quoteVerdict(v)).append(" }\n");
            }
        });
    }

    /** kube-proxy's chain names (letters, digits, "/", ".", "_", "-") are nft identifiers as they are. */
    private static String quote(String chain) {
        return chain;
    }

    private static String quoteVerdict(String v) {
        int sp = v.indexOf(' ');
        return v.substring(0, sp + 1) + quote(v.substring(sp + 1));
    }
}
