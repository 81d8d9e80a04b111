package io.nftproxy.proxy.iptables;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.LocalDetection;
import io.nftproxy.proxy.config.NodePortAddresses;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.plan.ExternalLocalSteps;
import io.nftproxy.proxy.plan.ServicePlan;
import io.nftproxy.proxy.plan.Target;
import io.nftproxy.proxy.render.RenderFailure;

/**
 * The reference backend: the same model rendered as iptables-restore input with kube-proxy's
 * iptables-mode layout (KUBE-SERVICES, KUBE-SVC/SVL/EXT/FW/SEP chains, statistic cascades,
 * recent for affinity, KUBE-MARK-MASQ and KUBE-POSTROUTING, the filter table's REJECT and DROP
 * rules). A pure function; applying it is {@link IptablesSyncer}'s job.
 */
public final class IptablesRenderer {
    private static final Logger LOG = LoggerFactory.getLogger(IptablesRenderer.class);
    /**
     * Our chains and rules for one family: iptables-restore text for nat and filter, the chain
     * names, and the service ports left out because rendering them failed ("ns/name:port/proto: reason").
     */
    public record Output(String restore, Set<String> natChains, Set<String> filterChains, List<String> rejected) {
        public Output {
            rejected = List.copyOf(rejected);
        }
    }

    /** The jumps from the built-in chains, ensured separately ({@code iptables -C} / {@code -I}). */
    public static final List<List<String>> JUMPS = List.of(
            List.of("nat", "PREROUTING", "-m", "comment", "--comment", "kubernetes service portals", "-j", "KUBE-SERVICES"),
            List.of("nat", "OUTPUT", "-m", "comment", "--comment", "kubernetes service portals", "-j", "KUBE-SERVICES"),
            List.of("nat", "POSTROUTING", "-m", "comment", "--comment", "kubernetes postrouting rules", "-j", "KUBE-POSTROUTING"),
            List.of("filter", "INPUT", "-m", "conntrack", "--ctstate", "NEW", "-j", "KUBE-PROXY-FIREWALL"),
            List.of("filter", "INPUT", "-m", "conntrack", "--ctstate", "NEW", "-j", "KUBE-EXTERNAL-SERVICES"),
            List.of("filter", "FORWARD", "-m", "conntrack", "--ctstate", "NEW", "-j", "KUBE-PROXY-FIREWALL"),
            List.of("filter", "FORWARD", "-j", "KUBE-FORWARD"),
            List.of("filter", "FORWARD", "-m", "conntrack", "--ctstate", "NEW", "-j", "KUBE-SERVICES"),
            List.of("filter", "FORWARD", "-m", "conntrack", "--ctstate", "NEW", "-j", "KUBE-EXTERNAL-SERVICES"),
            List.of("filter", "OUTPUT", "-m", "conntrack", "--ctstate", "NEW", "-j", "KUBE-PROXY-FIREWALL"),
            List.of("filter", "OUTPUT", "-m", "conntrack", "--ctstate", "NEW", "-j", "KUBE-SERVICES"));

    private final ProxyConfig config;

    public IptablesRenderer(ProxyConfig config) {
        this.config = config;
    }

    public Output render(ProxyState state, IpFamily f) {
        return new Render(state, f).run();
    }

    /** Removes what was added to an insertion-ordered set after it held {@code size} elements. */
    private static void truncate(Set<String> chains, int size) {
        Iterator<String> it = chains.iterator();
        for (int i = 0; it.hasNext(); i++) {
            it.next();
            if (i >= size) {
                it.remove();
            }
        }
    }

    private final class Render {
        final ProxyState state;
        final IpFamily f;
        final String mark;
        final Set<String> nat = new LinkedHashSet<>();
        final Set<String> filter = new LinkedHashSet<>();
        final List<String> natRules = new ArrayList<>();
        final List<String> filterRules = new ArrayList<>();
        final List<String> rejected = new ArrayList<>();

        Render(ProxyState state, IpFamily f) {
            this.state = state;
            this.f = f;
            this.mark = String.format("0x%x", config.masqueradeMark());
        }

        String host(InetAddress a) {
            return Inet.format(a) + (f == IpFamily.V4 ? "/32" : "/128");
        }

        /** A rule appended to a chain of the nat table. */
        void natRule(String chain, String... parts) {
            natRules.add("-A " + chain + " " + String.join(" ", parts));
        }

        /** A rule appended to a chain of the filter table. */
        void filterRule(String chain, String... parts) {
            filterRules.add("-A " + chain + " " + String.join(" ", parts));
        }

        Output run() {
            for (String c : List.of("KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING", "KUBE-MARK-MASQ")) {
                nat.add(c);
            }
            for (String c : List.of("KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-FORWARD", "KUBE-PROXY-FIREWALL",
                    "KUBE-NODEPORTS")) {
                filter.add(c);
            }
            natRule("KUBE-POSTROUTING", "-m mark ! --mark " + mark + "/" + mark, "-j RETURN");
            natRule("KUBE-POSTROUTING", "-j MARK --xor-mark " + mark);
            natRule("KUBE-POSTROUTING", "-m comment --comment \"kubernetes service traffic requiring SNAT\"",
                    "-j MASQUERADE --random-fully");
            natRule("KUBE-MARK-MASQ", "-j MARK --or-mark " + mark);
            if (config.dropInvalid()) {
                filterRule("KUBE-FORWARD", "-m conntrack --ctstate INVALID -j DROP");
            }
            filterRule("KUBE-FORWARD", "-m comment --comment \"kubernetes forwarding rules\"", "-m mark --mark " + mark + "/" + mark,
                    "-j ACCEPT");
            filterRule("KUBE-FORWARD", "-m comment --comment \"kubernetes forwarding conntrack rule\"",
                    "-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT");

            for (ServicePort svc : state.sortedServices()) {
                if (!svc.inFamily(f)) {
                    continue;
                }
                int natChains = nat.size();
                int filterChains = filter.size();
                int natRuleCount = natRules.size();
                int filterRuleCount = filterRules.size();
                try {
                    service(ServicePlan.of(svc, state.endpointsOf(svc.id()), state.node(), config, f));
                } catch (RuntimeException e) {
                    // A failure costs this service only: take back what it had written, say why.
                    truncate(nat, natChains);
                    truncate(filter, filterChains);
                    natRules.subList(natRuleCount, natRules.size()).clear();
                    filterRules.subList(filterRuleCount, filterRules.size()).clear();
                    String reason = RenderFailure.describe(e);
                    LOG.atError().addKeyValue("service", svc.id().namespace() + "/" + svc.id().name())
                            .addKeyValue("port", svc.id().port()).addKeyValue("protocol", svc.id().protocol())
                            .log("service port {} cannot be programmed; leaving it out: {}", svc.id(), reason);
                    LOG.debug("rendering service port {} failed", svc.id(), e);
                    rejected.add(svc.id() + ": " + reason);
                }
            }
            // NodePorts, last: on the addresses nodePortAddresses selects (default the primary IPs).
            List<Cidr> npa = NodePortAddresses.of(config, state.node(), f);
            if (NodePortAddresses.matchesAll(npa)) {
                natRule("KUBE-SERVICES", "-m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in"
                        + " this chain\"", "-m addrtype --dst-type LOCAL", "! -d " + NodePortAddresses.loopback(f),
                        "-j KUBE-NODEPORTS");
            } else {
                for (Cidr c : npa) {
                    natRule("KUBE-SERVICES", "-m comment --comment \"kubernetes service nodeports\"", "-d " + c,
                            "-m addrtype --dst-type LOCAL", "-j KUBE-NODEPORTS");
                }
            }

            StringBuilder sb = new StringBuilder();
            sb.append("*nat\n");
            nat.forEach(c -> sb.append(':').append(c).append(" - [0:0]\n"));
            natRules.forEach(r -> sb.append(r).append('\n'));
            sb.append("COMMIT\n*filter\n");
            filter.forEach(c -> sb.append(':').append(c).append(" - [0:0]\n"));
            filterRules.forEach(r -> sb.append(r).append('\n'));
            sb.append("COMMIT\n");
            return new Output(sb.toString(), nat, filter, rejected);
        }

        String match(Protocol protocol) {
            String p = protocol.lower();
            return "-m " + p + " -p " + p;
        }

        void service(ServicePlan plan) {
            ServicePortName id = plan.id();
            String name = ChainNames.servicePortName(id);
            String svcChain = ChainNames.svc(id);
            String svlChain = ChainNames.svl(id);
            String extChain = ChainNames.ext(id);
            String port = " --dport " + plan.port();

            if (!plan.clusterEndpoints().isEmpty()) {
                nat.add(svcChain);
            }
            if (!plan.localEndpoints().isEmpty()) {
                nat.add(svlChain);
            }
            // The masquerade rule for off-cluster sources comes first in the policy chain.
            for (InetAddress ip : plan.clusterIPs()) {
                String args = "-m comment --comment \"" + name + " cluster IP\" " + match(plan.protocol()) + " -d " + host(ip) + port;
                String internalChain = switch (plan.internal()) {
                    case CLUSTER -> svcChain;
                    case LOCAL -> svlChain;
                    default -> null;
                };
                if (internalChain != null) {
                    switch (plan.clusterIpMasquerade()) {
                        case ALL -> natRule(internalChain, args, "-j KUBE-MARK-MASQ");
                        case NOT_FROM_PODS -> natRule(internalChain, args, podTraffic(true), "-j KUBE-MARK-MASQ");
                        case NONE -> { }
                    }
                    natRule("KUBE-SERVICES", args, "-j " + internalChain);
                } else {
                    filterRule("KUBE-SERVICES", args, reject(plan.internal()));
                }
            }
            if (!plan.clusterEndpoints().isEmpty()) {
                balance(plan, svcChain, plan.clusterEndpoints());
            }
            if (!plan.localEndpoints().isEmpty()) {
                balance(plan, svlChain, plan.localEndpoints());
            }
            if (plan.external() == Target.NONE) {
                return;
            }
            // The external chain, as kube-proxy's: whenever the service has endpoints.
            boolean usesExt = plan.external() != Target.REJECT;
            // Whether traffic that is not short-circuited finds an endpoint; if not, the filter
            // table rejects or drops it.
            String externalPolicyChain = switch (plan.external()) {
                case CLUSTER -> svcChain;
                case EXTERNAL_LOCAL -> plan.externalLocal().restToLocal() ? svlChain : null;
                default -> null;
            };
            if (usesExt) {
                nat.add(extChain);
                ExternalLocalSteps steps = plan.externalLocal();
                if (plan.masqueradeExternal()) {
                    natRule(extChain, "-m comment --comment \"masquerade traffic for " + name + " external destinations\"",
                            "-j KUBE-MARK-MASQ");
                }
                if (steps != null && steps.podsToCluster()) {
                    natRule(extChain, "-m comment --comment \"pod traffic for " + name + " external destinations\"",
                            podTraffic(false), "-j " + svcChain);
                }
                if (steps != null && steps.nodeToCluster()) {
                    natRule(extChain, "-m comment --comment \"masquerade LOCAL traffic for " + name + " external destinations\"",
                            "-m addrtype --src-type LOCAL", "-j KUBE-MARK-MASQ");
                    natRule(extChain, "-m comment --comment \"route LOCAL traffic for " + name + " external destinations\"",
                            "-m addrtype --src-type LOCAL", "-j " + svcChain);
                }
                if (externalPolicyChain != null) {
                    natRule(extChain, "-j " + externalPolicyChain);
                }
            }
            Target filtered = externalPolicyChain != null ? null : plan.external() == Target.REJECT ? Target.REJECT : Target.DROP;
            boolean firewalled = !plan.firewall().isEmpty();
            String fw = ChainNames.fw(id);
            if (firewalled && usesExt) {
                // Allowed sources are DNATed through the firewall chain; the rest keeps the
                // load-balancer IP as destination and is dropped by KUBE-PROXY-FIREWALL.
                nat.add(fw);
                for (Cidr c : plan.firewall()) {
                    natRule(fw, "-m comment --comment \"" + name + " loadbalancer IP\"", "-s " + c, "-j " + extChain);
                }
                natRule(fw, "-m comment --comment \"other traffic to " + name + " will be dropped by KUBE-PROXY-FIREWALL\"");
            }
            for (InetAddress ip : plan.externalFrontends()) {
                boolean lb = plan.loadBalancerIPs().contains(ip);
                String args = "-m comment --comment \"" + name + (lb ? " loadbalancer IP" : " external IP") + "\" "
                        + match(plan.protocol()) + " -d " + host(ip) + port;
                if (usesExt) {
                    natRule("KUBE-SERVICES", args, "-j " + (lb && firewalled ? fw : extChain));
                }
                if (lb && firewalled) {
                    filterRule("KUBE-PROXY-FIREWALL", "-m comment --comment \"" + name + " traffic not accepted by " + fw + "\"",
                            match(plan.protocol()), "-d " + host(ip) + port, "-j DROP");
                }
                if (filtered != null) {
                    filterRule("KUBE-EXTERNAL-SERVICES", args, reject(filtered));
                }
            }
            if (plan.nodePort() != 0) {
                String args = "-m comment --comment \"" + name + "\" " + match(plan.protocol()) + " --dport " + plan.nodePort();
                if (usesExt) {
                    natRule("KUBE-NODEPORTS", args, "-j " + extChain);
                }
                if (filtered != null) {
                    filterRule("KUBE-EXTERNAL-SERVICES", args, "-m addrtype --dst-type LOCAL", reject(filtered));
                }
            }
        }

        /**
         * kube-proxy's local traffic detector: the match for traffic from the cluster's pods (or,
         * with {@code negate}, not from them); asked only where the plan says it can tell them
         * apart in this family.
         */
        String podTraffic(boolean negate) {
            LocalDetection d = config.localDetection();
            String not = negate ? "! " : "";
            return switch (d.mode()) {
                case CLUSTER_CIDR, NODE_CIDR -> not + "-s " + d.cidrs(config, state.node(), f).get(0);
                case BRIDGE_INTERFACE -> not + "-i " + d.interfaceName();
                case INTERFACE_NAME_PREFIX -> not + "-i " + d.interfaceName() + "+";
            };
        }

        String reject(Target target) {
            return target == Target.REJECT ? "-j REJECT" : "-j DROP";
        }

        /** kube-proxy's cascade: endpoint i with probability 1/(n-i); affinity via the recent module first. */
        void balance(ServicePlan plan, String chain, List<Endpoint> eps) {
            int n = eps.size();
            ServicePortName id = plan.id();
            if (plan.sticky()) {
                for (Endpoint e : eps) {
                    String sep = ChainNames.sep(id, e);
                    natRule(chain, "-m comment --comment \"" + ChainNames.servicePortName(id) + " -> " + e.hostPort() + "\"",
                            "-m recent --name " + sep + " --rcheck --seconds " + plan.affinitySeconds() + " --reap",
                            "-j " + sep);
                }
            }
            for (int i = 0; i < n; i++) {
                Endpoint e = eps.get(i);
                String sep = ChainNames.sep(id, e);
                String comment = "-m comment --comment \"" + ChainNames.servicePortName(id) + " -> " + e.hostPort() + "\"";
                if (i < n - 1) {
                    natRule(chain, comment, "-m statistic --mode random --probability "
                            + String.format(Locale.ROOT, "%.10f", 1.0 / (n - i)), "-j " + sep);
                } else {
                    natRule(chain, comment, "-j " + sep);
                }
                if (nat.add(sep)) {
                    natRule(sep, "-m comment --comment \"" + ChainNames.servicePortName(id) + "\"",
                            "-s " + host(e.address()), "-j KUBE-MARK-MASQ");
                    natRule(sep, "-m comment --comment \"" + ChainNames.servicePortName(id) + "\"", match(plan.protocol()),
                            plan.sticky() ? "-m recent --name " + sep + " --set --rsource" : "",
                            "-j DNAT --to-destination " + e.hostPort());
                }
            }
        }
    }
}
