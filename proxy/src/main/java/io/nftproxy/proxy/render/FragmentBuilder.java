package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.NftRenderer.*;
import static io.nftproxy.proxy.render.TableNames.*;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.NftSyntax;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.proxy.config.LocalDetection;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.plan.FamilyPolicy;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.plan.Target;

/**
 * Collects one fragment of a family's table (chains, sets, elements) as the renderers add to it,
 * with the helpers they share: rules of this table, keys in the layout of the shared maps, the
 * local-traffic match.
 */
final class FragmentBuilder {
    final IpFamily f;
    final Family nf;
    final String t;
    final NodeInfo node;
    final RuleParts p;
    final ProxyConfig config;
    /** What the family's ports share ({@link #policy}); asked only by the shared chains and the pods' match. */
    private FamilyPolicy policy;
    final Map<String, DesiredChain> chains = new LinkedHashMap<>();
    final Map<String, NftSet> sets = new LinkedHashMap<>();
    final Map<String, List<SetElement>> elements = new LinkedHashMap<>();
    final Set<String> unmanaged = new HashSet<>();
    /** The order the port's endpoints hold their indices in (none for the globals). */
    EndpointSlots slots = EndpointSlots.NONE;
    /** The comment of this fragment's elements: its service port's name (null for the globals). */
    private String ownerComment;

    FragmentBuilder(ProxyConfig config, IpFamily f, NodeInfo node) {
        this.config = config;
        this.f = f;
        this.nf = f.nft();
        this.t = config.table();
        this.node = node;
        this.p = new RuleParts(f);
    }

    /**
     * Whether the pods' traffic is known and which ClusterIP connections are masqueraded in this
     * family: decided by the plan (a service port's own in ServicePlan), computed here only when
     * the globals or a pods' match ask, not for every service port rendered.
     */
    FamilyPolicy policy() {
        if (policy == null) {
            policy = FamilyPolicy.of(config, node, f);
        }
        return policy;
    }

    Fragment fragment() {
        return new Fragment(chains, sets, elements, unmanaged, slots);
    }

    /** Adds another fragment's chains, sets and elements to this one. */
    void merge(Fragment other) {
        chains.putAll(other.chains());
        sets.putAll(other.sets());
        other.elements().forEach((set, els) -> elements.computeIfAbsent(set, k -> new ArrayList<>()).addAll(els));
        unmanaged.addAll(other.unmanagedSets());
    }

    DataType addr() {
        return f == IpFamily.V4 ? DataType.IPV4_ADDR : DataType.IPV6_ADDR;
    }

    Rule rule(String chain, List<Expr> exprs) {
        return Rule.of(nf, t, chain, exprs);
    }

    void chain(Chain c, List<Rule> rules) {
        chains.put(c.name(), new DesiredChain(c, rules));
    }

    /** Declares a set; with --service-counters the sets that count connections carry a counter per element. */
    void set(NftSet s) {
        sets.put(s.name(), CountedSets.counts(config, s.name()) ? s.withCounter(true) : s);
    }

    /**
     * Names the service port every element added after this belongs to, in the element's
     * comment, as kube-proxy's nftables mode comments its map elements: "namespace/name:port"
     * ({@code nft list} and {@code nftproxy trace} show it). Elements that several service ports
     * may contribute (a ClusterIP, which each of a service's ports adds) carry none: which port's
     * comment the kernel kept would depend on the order they came in.
     */
    void commentWith(ServicePortName port) {
        ownerComment = Names.elementComment(port); // once per fragment, not per element
    }

    void element(String set, SetElement e) {
        if (ownerComment != null && e.comment() == null && !set.equals(CLUSTER_IPS)) {
            e = e.withComment(ownerComment);
        }
        elements.computeIfAbsent(set, k -> new ArrayList<>()).add(e);
    }

    /**
     * A frontend {@code services} sends on, in its kind's set or verdict map ({@code set}) and in
     * the set of every such frontend of its key, which {@code services} asks first ({@link GlobalChains}).
     */
    void dispatched(String set, SetElement e) {
        element(set, e);
        switch (set) {
            case SERVICE_IPS, SERVICE_NODEPORTS -> { } // the plain ports: there already
            case LOCAL_IPS, SERVICE_CHAINS -> element(SERVICE_IPS, SetElement.of(e.key()));
            case LOCAL_NODEPORTS, NODEPORT_CHAINS -> element(SERVICE_NODEPORTS, SetElement.of(e.key()));
            default -> throw new IllegalArgumentException("not a set services sends on: " + set);
        }
    }

    /** nft takes comments of up to 128 bytes: a longer name is cut there (on a character boundary), ending in "...". */
    static String comment(String text) {
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        if (utf8.length <= NftSyntax.MAX_COMMENT_BYTES) {
            return text;
        }
        int end = NftSyntax.MAX_COMMENT_BYTES - 3;
        while (end > 0 && (utf8[end] & 0xc0) == 0x80) {
            end--; // not inside a character
        }
        return new String(utf8, 0, end, StandardCharsets.UTF_8) + "...";
    }

    Bytes key(InetAddress a, int proto, int port) {
        return MapKeys.frontend(a, proto, port);
    }

    Bytes key(int proto, int port) {
        return MapKeys.nodePort(proto, port);
    }

    /**
     * Matches traffic from the cluster's pods (or, {@code negate}, traffic not from them) as the
     * configured local traffic detection tells them apart; only where the family's policy says
     * they can be ({@link FamilyPolicy#podTrafficKnown}).
     */
    List<Expr> podTraffic(boolean negate) {
        if (!policy().podTrafficKnown()) {
            throw new IllegalStateException("the pods' traffic cannot be told apart in " + f + ": the plan sends none");
        }
        LocalDetection d = config.localDetection();
        if (d.bySource()) {
            return List.of(p.loadSaddr(NfTablesUapi.NFT_REG_1), negate ? RuleParts.notIn(CLUSTER_CIDRS) : RuleParts.lookup(CLUSTER_CIDRS));
        }
        return RuleParts.iifname(d.interfaceName(),
                d.mode() == LocalDetection.Mode.INTERFACE_NAME_PREFIX, negate);
    }

    /** A frontend the plan rejects or drops: its key in the matching no-endpoint set, and among the unserved ones. */
    void noEndpoints(Target target, Bytes ipKey, Bytes nodePortKey) {
        boolean drop = switch (target) {
            case DROP -> true;
            case REJECT -> false;
            default -> throw new IllegalArgumentException("not a no-endpoint target: " + target);
        };
        if (ipKey != null) {
            element(drop ? NO_ENDPOINT_DROP : NO_ENDPOINT_REJECT, SetElement.of(ipKey));
            element(UNSERVED_IPS, SetElement.of(ipKey));
        }
        if (nodePortKey != null) {
            element(drop ? NODEPORT_NO_ENDPOINT_DROP : NODEPORT_NO_ENDPOINT_REJECT, SetElement.of(nodePortKey));
            element(UNSERVED_NODEPORTS, SetElement.of(nodePortKey));
        }
    }
}
