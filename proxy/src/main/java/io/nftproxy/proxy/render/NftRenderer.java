package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.RuleParts.concat;
import static io.nftproxy.proxy.render.RuleParts.verdict;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Hook;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NfTables;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Masq;
import io.nftproxy.proxy.config.LocalDetection;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.topology.EndpointSelection;
import io.nftproxy.proxy.topology.EndpointSelector;

/**
 * Renders the proxy state into the nf_tables objects of one table per family. A pure function.
 *
 * <p>The layout keeps the kernel's commit work per service constant (see docs/ruleset.md): all
 * services share a handful of global maps, each bound by one rule; a service costs one chain whose
 * rules pick an endpoint with a {@code numgen random mod k} cascade (no per-service set, no chain
 * per endpoint), plus map elements. Masquerade decisions that kube-proxy makes per service are
 * global set lookups here.
 */
public final class NftRenderer {
    // Global object names (the table is ours alone).
    public static final String SERVICE_IPS = "service-ips";
    public static final String SERVICE_NODEPORTS = "service-nodeports";
    public static final String SERVICE_ENDPOINTS = "service-endpoints";
    public static final String NODEPORT_ENDPOINTS = "nodeport-endpoints";
    public static final String NO_ENDPOINT_REJECT = "no-endpoint-reject";
    public static final String NO_ENDPOINT_DROP = "no-endpoint-drop";
    public static final String NODEPORT_NO_ENDPOINT_REJECT = "nodeport-no-endpoint-reject";
    public static final String NODEPORT_NO_ENDPOINT_DROP = "nodeport-no-endpoint-drop";
    /** Endpoint counts with a shared picking chain; larger groups get a chain of their own. */
    public static final int MAX_SHARED_PICK = 128;
    public static final String CLUSTER_IP_PORTS = "cluster-ip-ports";
    public static final String EXTERNAL_MASQ = "external-masquerade";
    public static final String NODEPORT_MASQ = "nodeport-masquerade";
    public static final String NODEPORT_ADDRS = "nodeport-addresses";
    public static final String CLUSTER_IPS = "cluster-ips";
    public static final String CLUSTER_CIDRS = "cluster-cidrs";
    public static final String SERVICE_CIDRS = "service-cidrs";
    public static final String HAIRPIN = "hairpin";
    public static final String AFFINITY = "affinity";
    public static final String FIREWALL_IPS = "firewall-ips";

    public static final String SERVICES = "services";
    public static final String MARK_FOR_MASQUERADE = "mark-for-masquerade";
    public static final String MASQUERADING = "masquerading";
    public static final String SERVICE_ENDPOINTS_CHECK = "service-endpoints-check";
    public static final String NODEPORT_ENDPOINTS_CHECK = "nodeport-endpoints-check";
    public static final String CLUSTER_IPS_CHECK = "cluster-ips-check";
    public static final String FIREWALL_CHECK = "firewall-check";
    static final String PICK = "pick-";
    /** kube-proxy's default affinity timeout; every entry is written with its own service's. */
    static final long AFFINITY_DEFAULT_MS = 10_800_000L;

    private final ProxyConfig config;

    public NftRenderer(ProxyConfig config) {
        this.config = config;
    }

    /** The whole desired ruleset of a state (a full render; syncs reuse fragments instead). */
    public Ruleset render(ProxyState state) {
        List<FamilyRuleset> out = new ArrayList<>();
        for (IpFamily f : IpFamily.values()) {
            Map<ServicePortName, Fragment> frags = new LinkedHashMap<>();
            for (ServicePort svc : state.sortedServices()) {
                frags.put(svc.id(), service(f, svc, state.endpointsOf(svc.id()), state.node()));
            }
            out.add(assemble(f, globals(f, state.node()), frags));
        }
        return new Ruleset(out);
    }

    /** The global skeleton of one family's table: shared chains, sets, and CIDR elements. */
    public Fragment globals(IpFamily f, NodeInfo node) {
        FamilyRender r = new FamilyRender(f, node);
        r.declareGlobals();
        return r.fragment();
    }

    /** One service port's contribution to one family's table (empty if it has no IP of that family). */
    public Fragment service(IpFamily f, ServicePort svc, List<Endpoint> endpoints, NodeInfo node) {
        if (!svc.inFamily(f)) {
            return Fragment.EMPTY;
        }
        FamilyRender r = new FamilyRender(f, node);
        List<Endpoint> eps = endpoints.stream().filter(e -> e.family() == f).toList();
        r.renderService(svc, EndpointSelector.select(svc, eps, node));
        return r.fragment();
    }

    /** Assembles fragments into one family's desired table. */
    public FamilyRuleset assemble(IpFamily f, Fragment globals, Map<ServicePortName, Fragment> services) {
        Map<String, DesiredChain> chains = new LinkedHashMap<>(globals.chains());
        Map<String, NftSet> sets = new LinkedHashMap<>(globals.sets());
        Set<String> unmanaged = new HashSet<>(globals.unmanagedSets());
        Map<String, ServicePortName> owners = new HashMap<>();
        for (Map.Entry<ServicePortName, Fragment> e : services.entrySet()) {
            chains.putAll(e.getValue().chains());
            sets.putAll(e.getValue().sets());
            unmanaged.addAll(e.getValue().unmanagedSets());
            for (String c : e.getValue().chains().keySet()) {
                owners.put(c, e.getKey());
            }
        }
        Map<String, Map<Bytes, SetElement>> elements = new HashMap<>();
        for (String name : sets.keySet()) {
            elements.put(name, new TreeMap<>());
        }
        Consumer<Fragment> addElements = fr -> fr.elements().forEach((set, els) -> {
            Map<Bytes, SetElement> m = elements.get(set);
            for (SetElement el : els) {
                m.putIfAbsent(el.key(), el);
            }
        });
        addElements.accept(globals);
        services.values().forEach(addElements);
        Map<String, DesiredSet> ds = new LinkedHashMap<>();
        for (NftSet s : sets.values()) {
            ds.put(s.name(), new DesiredSet(s, elements.get(s.name()), !unmanaged.contains(s.name())));
        }
        return new FamilyRuleset(f, new Table(f.nft(), config.table()), chains, ds, owners);
    }

    private final class FamilyRender {
        final IpFamily f;
        final Family nf;
        final String t;
        final NodeInfo node;
        final RuleParts p;
        final int mark = config.masqueradeMark();
        final Map<String, DesiredChain> chains = new LinkedHashMap<>();
        final Map<String, NftSet> sets = new LinkedHashMap<>();
        final Map<String, List<SetElement>> elements = new LinkedHashMap<>();
        final Set<String> unmanaged = new HashSet<>();

        FamilyRender(IpFamily f, NodeInfo node) {
            this.f = f;
            this.nf = f.nft();
            this.t = config.table();
            this.node = node;
            this.p = new RuleParts(f);
        }

        Fragment fragment() {
            return new Fragment(chains, sets, elements, unmanaged);
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

        void set(NftSet s) {
            sets.put(s.name(), s);
        }

        void element(String set, SetElement e) {
            elements.computeIfAbsent(set, k -> new ArrayList<>()).add(e);
        }

        Bytes key(InetAddress a, int proto, int port) {
            return Bytes.concat(Bytes.ip(a).padTo4(), Bytes.u8(proto).padTo4(), Bytes.be16(port).padTo4());
        }

        Bytes key(int proto, int port) {
            return Bytes.concat(Bytes.u8(proto).padTo4(), Bytes.be16(port).padTo4());
        }

        // ------------------------------------------------------------------ global structure

        void declareGlobals() {
            DataType a = addr();
            set(NftSet.map(nf, t, SERVICE_IPS, DataType.VERDICT, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("ClusterIP, external and load-balancer IP ports to the chain that picks their endpoint"));
            set(NftSet.map(nf, t, SERVICE_NODEPORTS, DataType.VERDICT, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("NodePorts to the chain that picks their endpoint"));
            DataType endpoint = DataType.concat(List.of(a, DataType.INET_SERVICE));
            set(new NftSet(nf, t, SERVICE_ENDPOINTS, List.of(a, DataType.INET_PROTO, DataType.INET_SERVICE, DataType.MARK),
                    endpoint, 0, 0, "service IP port . index to endpoint address . port"));
            set(new NftSet(nf, t, NODEPORT_ENDPOINTS, List.of(DataType.INET_PROTO, DataType.INET_SERVICE, DataType.MARK),
                    endpoint, 0, 0, "NodePort . index to endpoint address . port"));
            set(NftSet.set(nf, t, NO_ENDPOINT_REJECT, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("service IP ports without any endpoint: rejected"));
            set(NftSet.set(nf, t, NO_ENDPOINT_DROP, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("service IP ports without a usable endpoint here: dropped"));
            set(NftSet.set(nf, t, NODEPORT_NO_ENDPOINT_REJECT, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("NodePorts without any endpoint: rejected"));
            set(NftSet.set(nf, t, NODEPORT_NO_ENDPOINT_DROP, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("NodePorts without a usable endpoint here: dropped"));
            set(NftSet.map(nf, t, FIREWALL_IPS, DataType.VERDICT, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("load-balancer IP ports with loadBalancerSourceRanges"));
            set(NftSet.set(nf, t, CLUSTER_IP_PORTS, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("ClusterIP ports, masqueraded when reached from outside the cluster CIDR"));
            set(NftSet.set(nf, t, EXTERNAL_MASQ, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("external and load-balancer IP ports of externalTrafficPolicy Cluster services"));
            set(NftSet.set(nf, t, NODEPORT_MASQ, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("NodePorts of externalTrafficPolicy Cluster services"));
            set(NftSet.set(nf, t, CLUSTER_IPS, a).withComment("every ClusterIP"));
            set(NftSet.set(nf, t, HAIRPIN, a, a).withComment("endpoint . itself: hairpin traffic is masqueraded"));
            // One set for every service's ClientIP affinity (the kernel writes it, each entry with
            // its service's timeout): a set per endpoint made the kernel look sets up by name in
            // a list, and a full sync with 14,000 of them took 20 s at 10k services.
            // Five fields at most: nf_tables names a concatenated type in 32 bits, 6 per field. The
            // protocol is left out: a TCP and a UDP port of one service sharing an endpoint share
            // the client's memory of it, which sends the client to the same pod either way.
            set(NftSet.set(nf, t, AFFINITY, a, a, DataType.INET_SERVICE, a, DataType.INET_SERVICE)
                    .withFlags(NfTables.NFT_SET_EVAL).withTimeout(AFFINITY_DEFAULT_MS)
                    .withComment("client . service IP . port . endpoint . port: ClientIP session affinity"));
            unmanaged.add(AFFINITY);
            set(NftSet.set(nf, t, NODEPORT_ADDRS, a).withFlags(NfTables.NFT_SET_INTERVAL)
                    .withComment("addresses NodePorts are served on"));
            set(NftSet.set(nf, t, CLUSTER_CIDRS, a).withFlags(NfTables.NFT_SET_INTERVAL).withComment("pod network"));
            set(NftSet.set(nf, t, SERVICE_CIDRS, a).withFlags(NfTables.NFT_SET_INTERVAL)
                    .withComment("service network: unallocated IPs are dropped"));

            List<Cidr> npa = config.nodePortAddresses(f);
            if (npa.isEmpty()) {
                npa = config.nodeIPs().stream().filter(f::contains).map(ip -> new Cidr(ip, f.addressBytes() * 8)).toList();
                if (npa.isEmpty()) {
                    npa = node.addresses().stream().filter(f::contains)
                            .map(ip -> new Cidr(ip, f.addressBytes() * 8)).toList();
                }
            }
            intervals(NODEPORT_ADDRS, npa);
            // The networks local traffic comes from: the cluster's or this node's pod CIDRs.
            intervals(CLUSTER_CIDRS, config.localDetection().cidrs(config, node, f));
            intervals(SERVICE_CIDRS, config.serviceCIDRs(f));

            chain(Chain.regular(nf, t, MARK_FOR_MASQUERADE), List.of(rule(MARK_FOR_MASQUERADE, RuleParts.setMark(mark))));
            chain(Chain.regular(nf, t, MASQUERADING), List.of(
                    rule(MASQUERADING, concat(concat(RuleParts.ctStatusDnat(), p.saddrDaddr().toArray(new Expr[0])),
                            RuleParts.lookup(HAIRPIN), verdict(Verdict.jump(MARK_FOR_MASQUERADE)))),
                    rule(MASQUERADING, concat(RuleParts.markClear(mark), verdict(Verdict.RETURN))),
                    rule(MASQUERADING, RuleParts.flipMark(mark)),
                    rule(MASQUERADING, List.of(Masq.fullyRandom()))));

            List<Rule> services = new ArrayList<>();
            if (config.masqueradeAll()) {
                services.add(rule(SERVICES, concat(p.daddrProtoPort(), RuleParts.lookup(CLUSTER_IP_PORTS),
                        verdict(Verdict.jump(MARK_FOR_MASQUERADE)))));
            } else if (localTraffic(true) != null) {
                List<Expr> e = new ArrayList<>(p.daddrProtoPort());
                e.add(RuleParts.lookup(CLUSTER_IP_PORTS));
                e.addAll(localTraffic(true));
                e.add(verdict(Verdict.jump(MARK_FOR_MASQUERADE)));
                services.add(rule(SERVICES, e));
            }
            services.add(rule(SERVICES, concat(p.daddrProtoPort(), RuleParts.lookup(EXTERNAL_MASQ),
                    verdict(Verdict.jump(MARK_FOR_MASQUERADE)))));
            services.add(rule(SERVICES, concat(p.daddrProtoPort(), RuleParts.vmap(SERVICE_IPS))));
            List<Expr> nodeportMatch = concat(RuleParts.daddrLocal(), p.loadDaddr(NfTables.NFT_REG_1),
                    RuleParts.lookup(NODEPORT_ADDRS));
            services.add(rule(SERVICES, concat(concat(nodeportMatch, p.protoPort().toArray(new Expr[0])),
                    RuleParts.lookup(NODEPORT_MASQ), verdict(Verdict.jump(MARK_FOR_MASQUERADE)))));
            services.add(rule(SERVICES, concat(concat(nodeportMatch, p.protoPort().toArray(new Expr[0])),
                    RuleParts.vmap(SERVICE_NODEPORTS))));
            chain(Chain.regular(nf, t, SERVICES), services);

            // One shared chain per endpoint count k picks uniformly among a group's k endpoints:
            // a service is then only map elements, and changing it never changes a rule.
            for (int k = 1; k <= MAX_SHARED_PICK; k++) {
                String pick = PICK + k;
                chain(Chain.regular(nf, t, pick), List.of(
                        rule(pick, p.pickEndpoint(p.daddrProtoPort(), SERVICE_ENDPOINTS, k)),
                        rule(pick, p.pickEndpoint(p.protoPort(), NODEPORT_ENDPOINTS, k))));
            }

            chain(Chain.regular(nf, t, SERVICE_ENDPOINTS_CHECK), List.of(
                    rule(SERVICE_ENDPOINTS_CHECK, concat(p.daddrProtoPort(), RuleParts.lookup(NO_ENDPOINT_REJECT), p.reject())),
                    rule(SERVICE_ENDPOINTS_CHECK, concat(p.daddrProtoPort(), RuleParts.lookup(NO_ENDPOINT_DROP),
                            verdict(Verdict.DROP)))));
            List<Expr> nodePorts = concat(nodeportMatch, p.protoPort().toArray(new Expr[0]));
            chain(Chain.regular(nf, t, NODEPORT_ENDPOINTS_CHECK), List.of(
                    rule(NODEPORT_ENDPOINTS_CHECK, concat(nodePorts, RuleParts.lookup(NODEPORT_NO_ENDPOINT_REJECT), p.reject())),
                    rule(NODEPORT_ENDPOINTS_CHECK, concat(nodePorts, RuleParts.lookup(NODEPORT_NO_ENDPOINT_DROP),
                            verdict(Verdict.DROP)))));
            chain(Chain.regular(nf, t, CLUSTER_IPS_CHECK), List.of(
                    rule(CLUSTER_IPS_CHECK, List.of(p.loadDaddr(NfTables.NFT_REG_1),
                            RuleParts.lookup(CLUSTER_IPS), p.reject())),
                    rule(CLUSTER_IPS_CHECK, List.of(p.loadDaddr(NfTables.NFT_REG_1),
                            RuleParts.lookup(SERVICE_CIDRS), verdict(Verdict.DROP)))));
            chain(Chain.regular(nf, t, FIREWALL_CHECK), List.of(
                    rule(FIREWALL_CHECK, concat(p.daddrProtoPort(), RuleParts.vmap(FIREWALL_IPS)))));

            // Base chains: NAT at the usual priorities, filters around them (see docs/ruleset.md).
            base("nat-prerouting", "nat", Hook.PREROUTING, -100, jumpIfNew(false, SERVICES));
            base("nat-output", "nat", Hook.OUTPUT, -100, jumpIfNew(false, SERVICES));
            base("nat-postrouting", "nat", Hook.POSTROUTING, 100, jumpIfNew(false, MASQUERADING));
            base("filter-prerouting", "filter", Hook.PREROUTING, -110, jumpIfNew(true, FIREWALL_CHECK));
            base("filter-input", "filter", Hook.INPUT, -110,
                    jumpIfNew(true, NODEPORT_ENDPOINTS_CHECK, SERVICE_ENDPOINTS_CHECK));
            base("filter-forward", "filter", Hook.FORWARD, -110,
                    jumpIfNew(true, SERVICE_ENDPOINTS_CHECK, CLUSTER_IPS_CHECK));
            base("filter-output", "filter", Hook.OUTPUT, -110,
                    jumpIfNew(true, SERVICE_ENDPOINTS_CHECK, NODEPORT_ENDPOINTS_CHECK, FIREWALL_CHECK));
            // After the output DNAT (-100): what is still addressed to a ClusterIP found no service port.
            base("filter-output-post-dnat", "filter", Hook.OUTPUT, -90, jumpIfNew(true, CLUSTER_IPS_CHECK));
        }

        /**
         * Matches traffic from local pods (or, {@code negate}, traffic not from them) as the
         * configured local traffic detection tells them apart; null when it cannot in this family.
         */
        List<Expr> localTraffic(boolean negate) {
            LocalDetection d = config.localDetection();
            if (!d.implemented(config, node, f)) {
                return null;
            }
            if (d.bySource()) {
                return List.of(p.loadSaddr(NfTables.NFT_REG_1), negate ? RuleParts.notIn(CLUSTER_CIDRS) : RuleParts.lookup(CLUSTER_CIDRS));
            }
            return RuleParts.iifname(d.interfaceName(),
                    d.mode() == LocalDetection.Mode.INTERFACE_NAME_PREFIX, negate);
        }

        List<List<Expr>> jumpIfNew(boolean onlyNew, String... targets) {
            List<List<Expr>> out = new ArrayList<>();
            for (String target : targets) {
                out.add(onlyNew ? concat(RuleParts.ctStateNew(), verdict(Verdict.jump(target)))
                        : List.of(verdict(Verdict.jump(target))));
            }
            return out;
        }

        void base(String name, String type, Hook hook, int prio, List<List<Expr>> rules) {
            List<Rule> rs = new ArrayList<>();
            for (List<Expr> r : rules) {
                rs.add(rule(name, r));
            }
            chain(Chain.base(nf, t, name, type, hook, prio), rs);
        }

        /** CIDRs as interval elements: merged, each a start and an end one past it (none at the top of the space). */
        void intervals(String set, List<Cidr> cidrs) {
            for (Cidr.Range r : Cidr.merge(cidrs)) {
                element(set, SetElement.of(Bytes.ip(r.start())));
                if (r.endExclusive() != null) {
                    element(set, new SetElement(Bytes.ip(r.endExclusive()), null, null, 0, 0, NfTables.NFT_SET_ELEM_INTERVAL_END));
                }
            }
        }

        // ------------------------------------------------------------------ one service port

        /** The k elements "front key . index" to "address . port" that pick-k chooses among. */
        void endpoints(String map, Bytes front, List<Endpoint> eps) {
            for (int i = 0; i < eps.size(); i++) {
                Endpoint e = eps.get(i);
                element(map, SetElement.of(Bytes.concat(front, Bytes.host32(i)),
                        Data.value(Bytes.concat(Bytes.ip(e.address()).padTo4(), Bytes.be16(e.port()).padTo4()))));
            }
        }

        void renderService(ServicePort svc, EndpointSelection sel) {
            for (Endpoint e : sel.cluster()) {
                element(HAIRPIN, SetElement.of(Bytes.concat(Bytes.ip(e.address()), Bytes.ip(e.address()))));
            }
            for (Endpoint e : sel.local()) {
                element(HAIRPIN, SetElement.of(Bytes.concat(Bytes.ip(e.address()), Bytes.ip(e.address()))));
            }
            int proto = svc.protocol().number();
            for (InetAddress ip : svc.clusterIPs(f)) {
                element(CLUSTER_IPS, SetElement.of(Bytes.ip(ip)));
                element(CLUSTER_IP_PORTS, SetElement.of(key(ip, proto, svc.port())));
            }
            boolean complex = svc.affinitySeconds() > 0 || (svc.externalPolicyLocal() && svc.hasExternal())
                    || sel.cluster().size() > MAX_SHARED_PICK || sel.local().size() > MAX_SHARED_PICK;
            if (complex) {
                renderWithChains(svc, sel);
            } else {
                renderAsData(svc, sel);
            }
            renderFirewall(svc);
        }

        void noEndpoints(boolean any, Bytes ipKey, Bytes nodePortKey) {
            if (ipKey != null) {
                element(any ? NO_ENDPOINT_DROP : NO_ENDPOINT_REJECT, SetElement.of(ipKey));
            }
            if (nodePortKey != null) {
                element(any ? NODEPORT_NO_ENDPOINT_DROP : NODEPORT_NO_ENDPOINT_REJECT, SetElement.of(nodePortKey));
            }
        }

        /**
         * The common case: no rule of its own, only elements of the shared maps. The verdict map
         * sends the service to the pick-k chain of its endpoint count, which draws an index in
         * [0, k) and looks "destination . index" up to find the endpoint.
         */
        void renderAsData(ServicePort svc, EndpointSelection sel) {
            int proto = svc.protocol().number();
            List<Endpoint> cluster = svc.usesClusterEndpoints() ? sel.cluster() : List.of();
            List<Endpoint> internal = svc.internalPolicyLocal() ? sel.local() : cluster;
            for (InetAddress ip : svc.clusterIPs(f)) {
                Bytes k = key(ip, proto, svc.port());
                if (!internal.isEmpty()) {
                    element(SERVICE_IPS, SetElement.of(k, Verdict.goTo(PICK + internal.size())));
                    endpoints(SERVICE_ENDPOINTS, k, internal);
                } else {
                    noEndpoints(sel.anyEndpoints(), k, null);
                }
            }
            // External traffic with the Cluster policy (Local goes the way of chains).
            List<InetAddress> front = new ArrayList<>(svc.externalIPs(f));
            front.addAll(svc.loadBalancerIPs(f));
            for (InetAddress ip : front) {
                Bytes k = key(ip, proto, svc.port());
                if (!cluster.isEmpty()) {
                    element(SERVICE_IPS, SetElement.of(k, Verdict.goTo(PICK + cluster.size())));
                    endpoints(SERVICE_ENDPOINTS, k, cluster);
                    element(EXTERNAL_MASQ, SetElement.of(k));
                } else {
                    noEndpoints(sel.anyEndpoints(), k, null);
                }
            }
            if (svc.nodePort() != 0) {
                Bytes k = key(proto, svc.nodePort());
                if (!cluster.isEmpty()) {
                    element(SERVICE_NODEPORTS, SetElement.of(k, Verdict.goTo(PICK + cluster.size())));
                    endpoints(NODEPORT_ENDPOINTS, k, cluster);
                    element(NODEPORT_MASQ, SetElement.of(k));
                } else {
                    noEndpoints(sel.anyEndpoints(), null, k);
                }
            }
        }

        /** Session affinity, externalTrafficPolicy Local and very large groups: chains of their own. */
        void renderWithChains(ServicePort svc, EndpointSelection sel) {
            int proto = svc.protocol().number();
            String svcChain = null;
            String svlChain = null;
            if (svc.usesClusterEndpoints() && !sel.cluster().isEmpty()) {
                svcChain = Names.clusterChain(svc);
                chain(Chain.regular(nf, t, svcChain), pickEndpoint(svc, svcChain, sel.cluster()));
            }
            if (svc.usesLocalEndpoints() && !sel.local().isEmpty()) {
                svlChain = Names.localChain(svc);
                chain(Chain.regular(nf, t, svlChain), pickEndpoint(svc, svlChain, sel.local()));
            }

            // Internal traffic: the ClusterIPs.
            String internal = svc.internalPolicyLocal() ? svlChain : svcChain;
            for (InetAddress ip : svc.clusterIPs(f)) {
                if (internal != null) {
                    element(SERVICE_IPS, SetElement.of(key(ip, proto, svc.port()), Verdict.goTo(internal)));
                } else {
                    noEndpoints(sel.anyEndpoints(), key(ip, proto, svc.port()), null);
                }
            }
            if (!svc.hasExternal()) {
                return;
            }

            // External traffic: NodePort, external IPs, load-balancer IPs.
            String external;
            if (!svc.externalPolicyLocal()) {
                external = svcChain;
            } else {
                // Local policy: pods and the node itself still reach every endpoint; the rest only
                // this node's, and nothing when it has none.
                external = Names.externalChain(svc);
                List<Rule> ext = new ArrayList<>();
                if (svcChain != null) {
                    if (localTraffic(false) != null) {
                        ext.add(rule(external, concat(localTraffic(false), verdict(Verdict.goTo(svcChain)))));
                    }
                    ext.add(rule(external, concat(RuleParts.saddrLocal(), verdict(Verdict.jump(MARK_FOR_MASQUERADE)))));
                    ext.add(rule(external, concat(RuleParts.saddrLocal(), verdict(Verdict.goTo(svcChain)))));
                }
                ext.add(rule(external, List.of(verdict(svlChain != null ? Verdict.goTo(svlChain) : Verdict.DROP))));
                chain(Chain.regular(nf, t, external), ext);
            }
            List<InetAddress> frontIPs = new ArrayList<>(svc.externalIPs(f));
            frontIPs.addAll(svc.loadBalancerIPs(f));
            for (InetAddress ip : frontIPs) {
                Bytes k = key(ip, proto, svc.port());
                if (external != null) {
                    element(SERVICE_IPS, SetElement.of(k, Verdict.goTo(external)));
                    if (!svc.externalPolicyLocal()) {
                        element(EXTERNAL_MASQ, SetElement.of(k));
                    }
                } else {
                    noEndpoints(sel.anyEndpoints(), k, null);
                }
            }
            if (svc.nodePort() != 0) {
                Bytes k = key(proto, svc.nodePort());
                if (external != null) {
                    element(SERVICE_NODEPORTS, SetElement.of(k, Verdict.goTo(external)));
                    if (!svc.externalPolicyLocal()) {
                        element(NODEPORT_MASQ, SetElement.of(k));
                    }
                } else {
                    noEndpoints(sel.anyEndpoints(), null, k);
                }
            }
        }

        void renderFirewall(ServicePort svc) {
            int proto = svc.protocol().number();
            List<Cidr> ranges = svc.loadBalancerSourceRanges(f);
            if (ranges.isEmpty() || svc.loadBalancerIPs(f).isEmpty()) {
                return;
            }
            String fw = Names.firewallChain(svc);
            List<Rule> rules = new ArrayList<>();
            for (Cidr c : ranges) {
                rules.add(rule(fw, concat(p.saddrInPrefix(c), verdict(Verdict.RETURN))));
            }
            // A node reaching its own load-balancer VIP arrives with the VIP as source.
            boolean allowFromNode = ranges.stream().anyMatch(c -> config.nodeIPs().stream().anyMatch(c::contains)
                    || node.addresses().stream().anyMatch(c::contains));
            if (allowFromNode) {
                for (InetAddress ip : svc.loadBalancerIPs(f)) {
                    rules.add(rule(fw, concat(p.saddrInPrefix(new Cidr(ip, f.addressBytes() * 8)), verdict(Verdict.RETURN))));
                }
            }
            rules.add(rule(fw, List.of(verdict(Verdict.DROP))));
            chain(Chain.regular(nf, t, fw), rules);
            for (InetAddress ip : svc.loadBalancerIPs(f)) {
                element(FIREWALL_IPS, SetElement.of(key(ip, proto, svc.port()), Verdict.goTo(fw)));
            }
        }

        /**
         * Uniform random choice among k endpoints in k rules: rule i matches with probability
         * 1/(k-i) (a fresh random number each), which gives every endpoint 1/k. With ClientIP
         * affinity, a client that recently reached an endpoint goes straight back to it.
         */
        List<Rule> pickEndpoint(ServicePort svc, String chain, List<Endpoint> eps) {
            List<Rule> rules = new ArrayList<>();
            boolean affinity = svc.affinitySeconds() > 0;
            long timeoutMs = svc.affinitySeconds() * 1000L;
            List<InetAddress> vips = svc.clusterIPs(f);
            // The service port is named in the affinity key by its ClusterIP and port (one owner
            // per frontend), so that two services sharing an endpoint keep apart.
            InetAddress vip = vips.isEmpty() ? Inet.parse(f == IpFamily.V4 ? "0.0.0.0" : "::") : vips.get(0);
            if (affinity) {
                for (Endpoint e : eps) {
                    List<Expr> key = p.affinityKey(vip, svc.port(), e.address(), e.port());
                    List<Expr> r = new ArrayList<>(key);
                    r.add(RuleParts.lookup(AFFINITY));
                    r.addAll(RuleParts.remember(key, AFFINITY, timeoutMs));
                    r.addAll(p.dnat(svc.protocol(), e.address(), e.port()));
                    rules.add(rule(chain, r));
                }
            }
            int k = eps.size();
            for (int i = 0; i < k; i++) {
                Endpoint e = eps.get(i);
                List<Expr> r = new ArrayList<>();
                if (i < k - 1) {
                    r.addAll(RuleParts.oneIn(k - i));
                }
                if (affinity) {
                    r.addAll(RuleParts.remember(p.affinityKey(vip, svc.port(), e.address(), e.port()),
                            AFFINITY, timeoutMs));
                }
                r.addAll(p.dnat(svc.protocol(), e.address(), e.port()));
                rules.add(rule(chain, r));
            }
            return rules;
        }
    }
}
