package io.nftproxy.tools.bench;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;

/**
 * kube-proxy's nftables-mode layout for the benchmark's services, as nft text: a verdict map from
 * service IP . protocol . port (and one from NodePort) to a chain per service, whose anonymous
 * {@code numgen random mod k vmap} jumps to a chain per endpoint that marks hairpin traffic and
 * DNATs. A full sync loads it whole; a partial sync, as kube-proxy's does, flushes and refills
 * only the chains that changed, creates and deletes chains, and edits the maps' elements.
 */
public final class KubeProxyNftLayout {
    public static final String TABLE = "kube-proxy-layout";

    /**
     * Chains by name (each its rule lines, in order), sets by name (their declaration: the
     * per-endpoint affinity sets) and the three maps' elements (key to verdict).
     */
    public record Layout(Map<String, List<String>> chains, Map<String, String> sets, Map<String, String> serviceIps,
                         Map<String, String> nodePorts, Map<String, String> firewallIps) {
    }

    private KubeProxyNftLayout() {
    }

    /**
     * As kube-proxy's nftables mode lays services out: a chain per service picking an endpoint
     * chain with an anonymous numgen vmap; with ClientIP affinity a dynamic set per endpoint,
     * checked before the vmap and updated by the endpoint's chain; with externalTrafficPolicy
     * Local an external chain for the NodePort that sends pods and the node itself to the service
     * chain and everyone else to this node's endpoints only (dropped when there are none); a
     * load-balancer IP in the service map too, and with loadBalancerSourceRanges in the firewall
     * map, to a chain per service dropping sources outside the ranges.
     */
    public static Layout of(ProxyState state) {
        Map<String, List<String>> chains = new LinkedHashMap<>();
        Map<String, String> sets = new LinkedHashMap<>();
        Map<String, String> ips = new LinkedHashMap<>();
        Map<String, String> nodePorts = new LinkedHashMap<>();
        Map<String, String> firewallIps = new LinkedHashMap<>();
        chains.put("mark-for-masquerade", List.of("meta mark set meta mark | 0x4000"));
        for (ServicePort svc : state.sortedServices()) {
            String name = svc.id().namespace() + "/" + svc.id().name() + "/tcp/" + svc.id().port();
            String ip = svc.clusterIPs().get(0).getHostAddress();
            List<Endpoint> eps = state.endpointsOf(svc.id());
            boolean affinity = svc.affinitySeconds() > 0;
            List<String> rules = new ArrayList<>();
            rules.add("ip daddr " + ip + " tcp dport " + svc.port() + " ip saddr != 10.128.0.0/9 jump mark-for-masquerade");
            if (affinity) {
                for (Endpoint e : eps) {
                    rules.add("ip saddr @" + affinitySet(name, e) + " goto " + endpointChain(name, e));
                }
            }
            if (!eps.isEmpty()) {
                rules.add(vmap(name, eps));
            }
            chains.put("service-" + name, rules);
            for (Endpoint e : eps) {
                String ea = e.address().getHostAddress();
                List<String> ep = new ArrayList<>(List.of("ip saddr " + ea + " jump mark-for-masquerade"));
                if (affinity) {
                    sets.put(affinitySet(name, e), "type ipv4_addr; flags dynamic,timeout; timeout " + svc.affinitySeconds() + "s;");
                    ep.add("update @" + affinitySet(name, e) + " { ip saddr }");
                }
                ep.add("meta l4proto tcp dnat to " + ea + ":" + e.port());
                chains.put(endpointChain(name, e), ep);
            }
            ips.put(ip + " . tcp . " + svc.port(), "goto service-" + name);
            String external = "service-" + name;
            if (svc.externalPolicyLocal() && svc.hasExternal()) {
                List<Endpoint> local = eps.stream().filter(e -> state.node().name().equals(e.nodeName())).toList();
                external = "external-" + name;
                chains.put(external, List.of("ip saddr 10.128.0.0/9 goto service-" + name,
                        "fib saddr type local jump mark-for-masquerade", "fib saddr type local goto service-" + name,
                        local.isEmpty() ? "drop" : vmap(name, local)));
            }
            if (svc.nodePort() != 0) {
                nodePorts.put("tcp . " + svc.nodePort(), "goto " + external);
            }
            for (InetAddress lb : svc.loadBalancerIPs()) {
                String key = lb.getHostAddress() + " . tcp . " + svc.port();
                ips.put(key, "goto " + external);
                if (!svc.loadBalancerSourceRanges().isEmpty()) {
                    chains.put("firewall-" + name, List.of("ip saddr != { " + String.join(", ",
                            svc.loadBalancerSourceRanges().stream().map(Cidr::toString).toList()) + " } drop"));
                    firewallIps.put(key, "goto firewall-" + name);
                }
            }
        }
        return new Layout(chains, sets, ips, nodePorts, firewallIps);
    }

    private static String endpointChain(String service, Endpoint e) {
        return "endpoint-" + service + "__" + e.address().getHostAddress();
    }

    private static String affinitySet(String service, Endpoint e) {
        return "affinity-" + service + "__" + e.address().getHostAddress();
    }

    private static String vmap(String service, List<Endpoint> eps) {
        StringBuilder vmap = new StringBuilder("numgen random mod " + eps.size() + " vmap { ");
        for (int i = 0; i < eps.size(); i++) {
            vmap.append(i == 0 ? "" : ", ").append(i).append(" : goto ").append(endpointChain(service, eps.get(i)));
        }
        return vmap.append(" }").toString();
    }

    /** The whole table, replacing any earlier one in the same transaction. */
    public static String full(Layout l) {
        StringBuilder sb = new StringBuilder("table ip " + TABLE + "\ndelete table ip " + TABLE + "\ntable ip " + TABLE + " {\n");
        l.sets().forEach((name, decl) -> sb.append("\tset ").append(quote(name)).append(" { ").append(decl).append(" }\n"));
        l.chains().forEach((name, rules) -> {
            sb.append("\tchain ").append(quote(name)).append(" {\n");
            rules.forEach(r -> sb.append("\t\t").append(r).append('\n'));
            sb.append("\t}\n");
        });
        sb.append("\tmap service-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n");
        elements(sb, l.serviceIps());
        sb.append("\t}\n\tmap service-nodeports {\n\t\ttype inet_proto . inet_service : verdict\n");
        elements(sb, l.nodePorts());
        sb.append("\t}\n\tmap firewall-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n");
        elements(sb, l.firewallIps());
        sb.append("\t}\n\tchain nat-prerouting {\n\t\ttype nat hook prerouting priority -100; policy accept;\n"
                + "\t\tip daddr . meta l4proto . th dport vmap @service-ips\n"
                + "\t\tfib daddr type local meta l4proto . th dport vmap @service-nodeports\n\t}\n"
                + "\tchain filter-prerouting {\n\t\ttype filter hook prerouting priority -110; policy accept;\n"
                + "\t\tct state new ip daddr . meta l4proto . th dport vmap @firewall-ips\n\t}\n}\n");
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
     * What kube-proxy's partial sync sends for the change from {@code a} to {@code b}: new sets
     * and chains added, changed chains flushed and refilled, map elements replaced, then chains
     * and sets no longer referenced deleted. Unchanged ones are not mentioned.
     */
    public static String delta(Layout a, Layout b) {
        StringBuilder sb = new StringBuilder();
        String t = "ip " + TABLE + " ";
        b.sets().forEach((name, decl) -> {
            if (!a.sets().containsKey(name)) {
                sb.append("add set ").append(t).append(quote(name)).append(" { ").append(decl).append(" }\n");
            }
        });
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
        mapDelta(sb, t + "firewall-ips", a.firewallIps(), b.firewallIps());
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
        a.sets().forEach((name, decl) -> {
            if (!b.sets().containsKey(name)) {
                sb.append("delete set ").append(t).append(quote(name)).append('\n');
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
