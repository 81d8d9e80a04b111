package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.NftRenderer.*;
import static io.nftproxy.proxy.render.TableNames.*;
import static io.nftproxy.proxy.render.RuleParts.concat;
import static io.nftproxy.proxy.render.RuleParts.verdict;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.plan.ExternalLocalSteps;
import io.nftproxy.proxy.plan.ServicePlan;
import io.nftproxy.proxy.plan.Target;

/**
 * A service port with chains of its own ({@link #needed}): groups larger than the shared trees'
 * roots send on with ClientIP session affinity, or of this node's endpoints under the external
 * Local policy; externalTrafficPolicy Local with local endpoints but no cluster ones to
 * short-circuit pods to (an external chain choosing local endpoints).
 */
final class ServiceChains extends RenderPart {
    private final Set<Bytes> counted = new HashSet<>();

    ServiceChains(FragmentBuilder b) {
        super(b);
    }

    /**
     * Whether a port needs chains of its own: the external Local policy without cluster
     * endpoints, whose shared chain sends pods and the node to the cluster tree, which such a
     * port is not in; or a group past the blocks the trees' roots send on (MAX_PLAIN_PICK) with
     * ClientIP affinity (its clients are checked a rule per endpoint, as kube-proxy's are), or
     * this node's endpoints of an external Local port past it (the local trees have no verdict
     * map to their blocks), or a group past the largest count the trees pick among. A group
     * past MAX_PLAIN_PICK otherwise is sent to its block's tree by a verdict element
     * ({@link ServiceData}).
     */
    static boolean needed(ServicePlan plan) {
        if (plan.algorithm().hashed()) {
            return false; // at most MAX_HASHED_ENDPOINTS, of policy Cluster: a sticky one's numbers are data too
        }
        boolean externalLocal = plan.external() == Target.EXTERNAL_LOCAL;
        if (externalLocal && plan.clusterEndpoints().isEmpty()) {
            return true;
        }
        int largest = Math.max(plan.clusterEndpoints().size(), plan.localEndpoints().size());
        return largest > MAX_PLAIN_PICK && (plan.sticky() || largest > MAX_TREE_PICK
                || externalLocal && plan.localEndpoints().size() > MAX_PLAIN_PICK);
    }

    /** The picking chains of the port's cluster and local endpoints, the external chain, and the map elements to them. */
    void render(ServicePlan plan) {
        int proto = plan.protocol().number();
        int port = plan.port();
        String svcChain = null;
        String svlChain = null;
        if (!plan.clusterEndpoints().isEmpty()) {
            svcChain = Names.clusterChain(plan.id(), port);
            b.chain(Chain.regular(nf, t, svcChain), pickEndpoint(plan, svcChain, plan.clusterEndpoints()));
        }
        if (!plan.localEndpoints().isEmpty()) {
            svlChain = Names.localChain(plan.id(), port);
            b.chain(Chain.regular(nf, t, svlChain), pickEndpoint(plan, svlChain, plan.localEndpoints()));
        }

        // Internal traffic: the ClusterIPs.
        for (InetAddress ip : plan.clusterIPs()) {
            switch (plan.internal()) {
                case CLUSTER -> b.dispatched(SERVICE_CHAINS, SetElement.of(b.key(ip, proto, port), Verdict.goTo(svcChain)));
                case LOCAL -> b.dispatched(SERVICE_CHAINS, SetElement.of(b.key(ip, proto, port), Verdict.goTo(svlChain)));
                default -> b.noEndpoints(plan.internal(), b.key(ip, proto, port), null);
            }
        }

        // External traffic: NodePort, external IPs, load-balancer IPs.
        String external = switch (plan.external()) {
            case CLUSTER -> svcChain;
            case EXTERNAL_LOCAL -> Names.externalChain(plan.id(), port);
            default -> null;
        };
        ExternalLocalSteps steps = plan.externalLocal();
        if (steps != null) {
            List<Rule> ext = new ArrayList<>();
            if (steps.podsToCluster()) {
                ext.add(b.rule(external, concat(b.podTraffic(false), verdict(Verdict.goTo(svcChain)))));
            }
            if (steps.nodeToCluster()) {
                ext.add(b.rule(external, concat(RuleParts.saddrLocal(), verdict(Verdict.jump(MARK_FOR_MASQUERADE)))));
                ext.add(b.rule(external, concat(RuleParts.saddrLocal(), verdict(Verdict.goTo(svcChain)))));
            }
            if (steps.restToLocal()) {
                ext.add(b.rule(external, List.of(verdict(Verdict.goTo(svlChain)))));
            } else {
                // Counted as a drop, with counters on.
                ext.add(b.rule(external, concat(countDrop(plan), verdict(Verdict.DROP))));
            }
            b.chain(Chain.regular(nf, t, external), ext);
        }
        for (InetAddress ip : plan.externalFrontends()) {
            Bytes k = b.key(ip, proto, port);
            if (external != null) {
                b.dispatched(SERVICE_CHAINS, SetElement.of(k, Verdict.goTo(external)));
                if (plan.masqueradeExternal()) {
                    b.element(EXTERNAL_MASQ, SetElement.of(k));
                }
            } else if (plan.external() != Target.NONE) {
                b.noEndpoints(plan.external(), k, null);
            }
        }
        if (plan.nodePort() != 0) {
            Bytes k = b.key(proto, plan.nodePort());
            if (external != null) {
                b.dispatched(NODEPORT_CHAINS, SetElement.of(k, Verdict.goTo(external)));
                if (plan.masqueradeExternal()) {
                    b.element(NODEPORT_MASQ, SetElement.of(k));
                }
            } else {
                b.noEndpoints(plan.external(), null, k);
            }
        }
    }

    /**
     * Uniform random choice among k endpoints in k rules: rule i matches with probability
     * 1/(k-i) (a fresh random number each), which gives every endpoint 1/k. With ClientIP
     * affinity, a client that recently reached an endpoint goes straight back to it.
     */
    List<Rule> pickEndpoint(ServicePlan plan, String chain, List<Endpoint> eps) {
        List<Rule> rules = new ArrayList<>();
        long timeoutMs = plan.affinitySeconds() * 1000L;
        // The service port is named in the affinity key by its ClusterIP and port (one owner
        // per frontend), so that two services sharing an endpoint keep apart.
        InetAddress vip = serviceIp(plan);
        if (plan.sticky()) {
            for (Endpoint e : eps) {
                List<Expr> key = p.affinityKey(vip, plan.port(), e.address(), e.port());
                List<Expr> r = new ArrayList<>(key);
                r.add(RuleParts.lookup(AFFINITY));
                r.addAll(RuleParts.remember(key, AFFINITY, timeoutMs));
                r.addAll(count(vip, plan, e));
                r.addAll(p.dnat(plan.protocol(), e.address(), e.port()));
                rules.add(b.rule(chain, r));
            }
        }
        picks(plan, chain, eps, vip, timeoutMs, rules);
        if (plan.sticky()) {
            // Reached only when the kernel refused to remember the client (a full affinity set):
            // the same choice without remembering, so that a full set costs new clients their
            // stickiness, not their connection.
            picks(plan, chain, eps, vip, 0, rules);
        }
        return rules;
    }

    /**
     * The random pick among k endpoints in k rules, each remembering its endpoint for
     * {@code rememberMs} when that is not 0.
     */
    private void picks(ServicePlan plan, String chain, List<Endpoint> eps, InetAddress vip, long rememberMs,
                       List<Rule> rules) {
        int k = eps.size();
        for (int i = 0; i < k; i++) {
            Endpoint e = eps.get(i);
            List<Expr> r = new ArrayList<>();
            if (i < k - 1) {
                r.addAll(RuleParts.oneIn(k - i));
            }
            if (rememberMs > 0) {
                r.addAll(RuleParts.remember(p.affinityKey(vip, plan.port(), e.address(), e.port()), AFFINITY, rememberMs));
            }
            r.addAll(count(vip, plan, e));
            r.addAll(p.dnat(plan.protocol(), e.address(), e.port()));
            rules.add(b.rule(chain, r));
        }
    }

    /**
     * The address a service port's chains name it by, in affinity and counting keys: its first
     * ClusterIP (one owner per frontend), or the unspecified address when it has none.
     */
    private InetAddress serviceIp(ServicePlan plan) {
        List<InetAddress> vips = plan.clusterIPs();
        return vips.isEmpty() ? unspecified() : vips.get(0);
    }

    private InetAddress unspecified() {
        return Inet.parse(f == IpFamily.V4 ? "0.0.0.0" : "::");
    }

    /** With --service-counters: counts a connection the external chain drops, as the endpoint "unspecified address, port 0". */
    private List<Expr> countDrop(ServicePlan plan) {
        return config.serviceCounters() ? countAs(serviceIp(plan), plan, unspecified(), 0) : List.of();
    }

    /** With --endpoint-counters: the rule that sends a connection to {@code e} also counts it ({@link #countAs}). */
    private List<Expr> count(InetAddress vip, ServicePlan plan, Endpoint e) {
        return config.endpointCounters() ? countAs(vip, plan, e.address(), e.port()) : List.of();
    }

    /**
     * Counts a connection by a lookup of the constant key "service IP . protocol . port . endpoint
     * . port" in {@link TableNames#CHAIN_ENDPOINTS}, whose element counts the match. A rule of
     * this chain is the only place that knows both the service port and the endpoint.
     */
    private List<Expr> countAs(InetAddress vip, ServicePlan plan, InetAddress epAddress, int epPort) {
        int proto = plan.protocol().number();
        Bytes key = MapKeys.chainEndpoint(vip, proto, plan.port(), epAddress, epPort);
        if (counted.add(key)) { // an endpoint in two chains (cluster and local) or two rules (affinity): one element
            b.element(CHAIN_ENDPOINTS, SetElement.of(key));
        }
        return p.countEndpoint(vip, proto, plan.port(), epAddress, epPort, CHAIN_ENDPOINTS);
    }
}
