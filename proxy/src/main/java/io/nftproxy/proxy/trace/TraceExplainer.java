package io.nftproxy.proxy.trace;

import static io.nftproxy.proxy.render.TableNames.CLUSTER_IPS_CHECK;
import static io.nftproxy.proxy.render.TableNames.FIREWALL_SHARD;
import static io.nftproxy.proxy.render.TableNames.MARK_FOR_MASQUERADE;
import static io.nftproxy.proxy.render.TableNames.NODEPORT_ENDPOINTS_UNSERVED;
import static io.nftproxy.proxy.render.TableNames.SERVICE_ENDPOINTS_UNSERVED;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.IntFunction;

import io.nftproxy.netlink.ct.ConntrackEntry;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftTrace;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.render.Names;
import io.nftproxy.proxy.sync.Generation;

/**
 * Turns one packet's trace events into what an operator reads: where it entered, each rule of
 * ours it went through (in nft syntax, as {@code dump} prints rules) with its verdict, and the
 * outcome in the proxy's terms. A pure function of the events, the rules' text, the model and
 * what conntrack says of the connection.
 */
public final class TraceExplainer {
    /** A rule's text by family, chain and handle; null when it is not known (the rule is gone). */
    @FunctionalInterface
    public interface RuleText {
        String of(Family family, String chain, long handle);
    }

    /** What a trace says, as lines, and the outcome on its own for callers that check it. */
    public record Explanation(List<String> lines, String outcome) {
        @Override
        public String toString() {
            return String.join("\n", lines);
        }
    }

    private final String table;
    private final RuleText rules;
    private final IntFunction<String> interfaces;
    private final int masqueradeMark;
    private final Function<TracedPacket, String> kernelNames;

    /**
     * @param interfaces an interface's name by index (null when unknown)
     */
    public TraceExplainer(String table, RuleText rules, IntFunction<String> interfaces, int masqueradeMark) {
        this(table, rules, interfaces, masqueradeMark, p -> null);
    }

    /**
     * @param kernelNames names the service port a packet was addressed to when the state does not
     *                    (none given, or it lacks the service): from the kernel's element comments
     */
    public TraceExplainer(String table, RuleText rules, IntFunction<String> interfaces, int masqueradeMark,
                          Function<TracedPacket, String> kernelNames) {
        this.table = table;
        this.rules = rules;
        this.interfaces = interfaces;
        this.masqueradeMark = masqueradeMark;
        this.kernelNames = kernelNames;
    }

    /**
     * @param events    one packet's events, in the order the kernel sent them
     * @param state     what the proxy serves (null when unknown: the outcome names no service)
     * @param connection the connection conntrack holds for the packet (null when none)
     */
    public Explanation explain(List<NftTrace> events, ProxyState state, ConntrackEntry connection) {
        List<String> lines = new ArrayList<>();
        NftTrace first = events.get(0);
        TracedPacket packet = TracedPacket.of(first.network(), first.transport());
        StringBuilder head = new StringBuilder(String.format("trace %08x  %s", first.id(),
                packet == null ? "(headers not reported)" : packet.toString()));
        if (first.iif() != 0) {
            head.append("  in ").append(ifname(first.iif()));
        }
        if (first.oif() != 0) {
            head.append("  out ").append(ifname(first.oif()));
        }
        head.append("  hook ").append("output".equals(Names.traceHook(first.chain()))
                ? "output (from this node)" : "prerouting");
        lines.add(head.toString());

        String drop = null;
        boolean masquerade = (first.mark() & masqueradeMark) != 0;
        boolean local = false;
        String external = null;
        for (NftTrace e : events) {
            if (!table.equals(e.table()) || Names.isTraceChain(e.chain())) {
                continue;
            }
            String what = switch (e.type()) {
                case RULE -> e.ruleHandle() == 0 ? "(end of chain)" : ruleText(e);
                case POLICY -> "policy";
                case RETURN -> "return";
                case UNSPEC -> "?";
            };
            String verdict = e.type() == NftTrace.Type.POLICY ? (e.policy() == 1 ? "accept" : "drop")
                    : e.verdict() == null ? "" : e.verdict().toString();
            lines.add(String.format("  %-28s %s%s", e.chain(), what, verdict.isEmpty() ? "" : "  => " + verdict));
            Verdict v = e.verdict();
            // Chains are named in the generation in use (sync.Generation); the checks use the renderer's names.
            String jump = v == null ? null : Generation.original(v.chain());
            if (MARK_FOR_MASQUERADE.equals(jump)) {
                masquerade = true;
            }
            if (Names.isExternalLocal(Generation.original(e.chain()))) {
                external = e.chain();
                if (jump != null && Names.picksLocal(jump)) {
                    local = true;
                }
            }
            if (v != null && v.kind() == Verdict.Kind.DROP && drop == null) {
                drop = why(e);
            }
        }

        String service = packet == null ? null : service(packet, state);
        if (service == null && packet != null) {
            service = kernelNames.apply(packet);
        }
        StringBuilder outcome = new StringBuilder();
        if (service != null) {
            outcome.append(service).append(": ");
        }
        if (drop != null) {
            outcome.append(drop);
        } else if (connection != null && !connection.replySrc().equals(connection.origDst())) {
            outcome.append("endpoint ").append(TracedPacket.hostPort(connection.replySrc(), connection.replySport()));
            if (local) {
                outcome.append(" (externalTrafficPolicy Local: chosen among this node's endpoints only)");
            } else if (external != null) {
                outcome.append(" (externalTrafficPolicy Local; from this node or a pod: any endpoint)");
            }
            outcome.append(masquerade ? "; masquerade mark set: the source is SNATed" : "; no masquerade: the source is kept");
        } else if (service == null) {
            outcome.append("not a service of ours: no rule of ours changed it");
        } else {
            outcome.append("no connection tracked (the packet did not open one)");
        }
        lines.add("  => " + outcome);
        return new Explanation(lines, outcome.toString());
    }

    private String ruleText(NftTrace e) {
        String t = rules.of(e.family(), e.chain(), e.ruleHandle());
        return t == null ? "rule handle " + e.ruleHandle() + " (no longer there)" : t;
    }

    private String ifname(int index) {
        String n = interfaces.apply(index);
        return n == null ? "ifindex " + index : n;
    }

    /** Why a rule of ours dropped (or rejected) the packet, from where it was. */
    private String why(NftTrace e) {
        String chain = Generation.original(e.chain());
        String rule = e.ruleHandle() == 0 ? "" : rules.of(e.family(), e.chain(), e.ruleHandle());
        rule = rule == null ? "" : rule;
        if (chain.equals(SERVICE_ENDPOINTS_UNSERVED) || chain.equals(NODEPORT_ENDPOINTS_UNSERVED)) {
            return rule.contains("reject") ? "rejected: the service port has no endpoints"
                    : "dropped: none of its endpoints can be used here (traffic policy Local, none on this node)";
        }
        if (chain.equals(CLUSTER_IPS_CHECK)) {
            return rule.contains("reject") ? "rejected: a ClusterIP, but no service port on this port"
                    : "dropped: an address of the service network no service has";
        }
        if (Names.isExternalLocal(chain)) {
            return "dropped: externalTrafficPolicy Local and no endpoint on this node";
        }
        if (chain.startsWith(FIREWALL_SHARD)) {
            return "dropped: the source is outside the service's loadBalancerSourceRanges";
        }
        return "dropped by " + chain;
    }

    /** The service port the packet was addressed to, as "service namespace/name port NAME (proto)". */
    static String service(TracedPacket p, ProxyState state) {
        Protocol proto = p.proxied();
        if (state == null || proto == null) {
            return null;
        }
        IpFamily f = IpFamily.of(p.destination());
        ServicePort byNodePort = null;
        for (ServicePort s : state.sortedServices()) {
            if (s.protocol() != proto) {
                continue;
            }
            if (s.port() == p.destinationPort()) {
                List<InetAddress> front = new ArrayList<>(s.clusterIPs(f));
                front.addAll(s.externalIPs(f));
                front.addAll(s.loadBalancerIPs(f));
                if (front.contains(p.destination())) {
                    return describe(s, s.clusterIPs(f).contains(p.destination()) ? "ClusterIP"
                            : s.externalIPs(f).contains(p.destination()) ? "external IP" : "load-balancer IP");
                }
            }
            if (s.nodePort() != 0 && s.nodePort() == p.destinationPort() && byNodePort == null) {
                byNodePort = s;
            }
        }
        return byNodePort == null ? null : describe(byNodePort, "NodePort");
    }

    private static String describe(ServicePort s, String via) {
        return describe(s.id().nameAndPort(), s.protocol(), via);
    }

    /** A service port named as kube-proxy names it ("namespace/name:port", or without ":port" when unnamed), in words. */
    static String describe(String nameAndPort, Protocol proto, String via) {
        int colon = nameAndPort.indexOf(':');
        String service = colon < 0 ? nameAndPort : nameAndPort.substring(0, colon);
        String port = colon < 0 ? "(unnamed)" : nameAndPort.substring(colon + 1);
        return "service " + service + " port " + port + " (" + proto.name().toLowerCase(Locale.ROOT) + ") via its " + via;
    }
}
