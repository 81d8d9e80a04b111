package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.NftRenderer.*;
import static io.nftproxy.proxy.render.TableNames.*;
import static io.nftproxy.proxy.render.RuleParts.concat;
import static io.nftproxy.proxy.render.RuleParts.verdict;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Hook;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Masq;
import io.nftproxy.proxy.config.NodePortAddresses;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.plan.ExternalLocalSteps;
import io.nftproxy.proxy.plan.StickyTimeout;

/**
 * The part of a family's table every service shares: the global maps and sets, the chains that
 * look services up, mark and masquerade, reject and drop, and the base chains on the hooks.
 */
final class GlobalChains extends RenderPart {
    private final List<Cidr> serviceCidrs;
    private final Fragment picks;
    /** The firewall shards some load-balancer IP with source ranges is in ({@link TableNames#FIREWALL_ALLOW}), ascending. */
    private final List<Integer> shards = new ArrayList<>();
    /**
     * Whether some service port is sent on by a verdict element (chains of its own, or a block of
     * a tree past the root's), by IP port or by NodePort: only then the verdict maps to them and the rules that look them up (a verdict map cannot be
     * asked for membership before the NodePort's FIB lookup, so its rule would make every packet
     * to the node pay one).
     */
    private final boolean ownChains;
    /** The verdict maps of external Local frontends past the trees' roots' blocks that some frontend is in. */
    private final Set<String> externalLocalBlocks;
    private final boolean ownNodePortChains;

    /**
     * @param serviceCidrs the service network of this family, whose unallocated addresses are dropped
     * @param picks        the shared picking chains ({@link #picks})
     * @param demanded     the on-demand sets the services fill ({@link NftRenderer#isOnDemandSet})
     */
    GlobalChains(FragmentBuilder b, List<Cidr> serviceCidrs, Fragment picks, Set<String> demanded) {
        super(b);
        this.serviceCidrs = serviceCidrs;
        this.picks = picks;
        for (int k = 0; k < FIREWALL_SHARDS; k++) {
            if (demanded.contains(firewallAllow(k))) {
                shards.add(k);
            }
        }
        this.ownChains = demanded.contains(SERVICE_CHAINS);
        this.ownNodePortChains = demanded.contains(NODEPORT_CHAINS);
        this.externalLocalBlocks = Set.copyOf(demanded.stream()
                .filter(s -> s.equals(IP_EXTERNAL_LOCAL_BLOCKS) || s.equals(NODEPORT_EXTERNAL_LOCAL_BLOCKS)).toList());
    }

    /** "protocol . port in {@code set}, addressed to this node ({@code toThisNode})", then {@code then}. */
    private List<Expr> nodePort(String set, List<Expr> toThisNode, Expr... then) {
        return concat(concat(p.protoPort(), RuleParts.lookup(set)), concat(toThisNode, List.of(then)));
    }

    /**
     * The chains that pick an endpoint, shared by every service: per kind of frontend the trees
     * (over the cluster's endpoints and over this node's) and their leaves, the trees' blocks
     * whose sets are {@code demanded}, and for the kinds with ClientIP affinity in use (of these
     * timeouts) the chains that check and remember clients ({@link StickyPick}), with {@link
     * TableNames#STICKY_REMEMBER}, which the filter chains send new DNATed connections to; and the hashed
     * picks' maps and chains that some frontend uses ({@link MaglevPick}). A function of
     * the family, the timeouts and the on-demand sets alone, for the renderer to keep.
     */
    static Fragment picks(FragmentBuilder b, SortedSet<StickyTimeout> stickyTimeouts, Set<String> demanded) {
        List<StickyPick> sticky = new ArrayList<>();
        Set<PickTree.Kind> checked = EnumSet.noneOf(PickTree.Kind.class);
        for (PickTree.Kind kind : PickTree.Kind.values()) {
            if (!demanded.contains(kind.inUse())) {
                continue; // no frontend picks through this tree: none of it
            }
            SortedSet<Long> ofTree = new TreeSet<>();
            stickyTimeouts.stream().filter(t -> t.local() == kind.local).forEach(t -> ofTree.add(t.seconds()));
            new PickTree(b, kind, !ofTree.isEmpty(), demanded).declare();
            if (!ofTree.isEmpty()) {
                StickyPick s = new StickyPick(b, kind, ofTree, demanded);
                s.declare();
                checked.add(kind);
                if (s.rememberRoot() != null) {
                    sticky.add(s);
                }
            }
        }
        MaglevPick.declare(b, demanded, checked);
        if (!sticky.isEmpty()) {
            stickyRemember(b, sticky);
        }
        return b.fragment();
    }

    /**
     * A new connection DNATed to an endpoint of a sticky frontend goes down its kind's tree, which
     * writes "client . frontend . endpoint number". A NodePort's number is looked for only when
     * the connection's original destination is not an IP port services sends on (a ClusterIP
     * port and a NodePort may share a port number and an endpoint).
     */
    private static void stickyRemember(FragmentBuilder b, List<StickyPick> sticky) {
        List<Rule> rules = new ArrayList<>();
        rules.add(b.rule(STICKY_REMEMBER, concat(RuleParts.ctStatusNotDnat(), verdict(Verdict.RETURN))));
        sticky.stream().filter(StickyPick::ip).forEach(s -> rules.add(b.rule(STICKY_REMEMBER, s.toRoot())));
        // Asked as "not among them" in the NodePorts' own rules rather than by a rule that returns
        // for a member: a lookup that finds an element counts in it (--service-counters), and the
        // connection was counted where services sent it on.
        sticky.stream().filter(s -> !s.ip()).forEach(s -> rules.add(b.rule(STICKY_REMEMBER,
                concat(concat(b.p.originalDaddrProtoPort(0), RuleParts.notIn(SERVICE_IPS)), s.toRoot()))));
        b.chain(Chain.regular(b.nf, b.t, STICKY_REMEMBER), rules);
    }

    void declare() {
        DataType a = b.addr();
        // A plain service port is a member of these sets, and its endpoint count is its
        // membership in the pick trees' bit sets: changing either commits elements without data,
        // which the kernel commits without validating a chain (see PickTree).
        // Every IP port and NodePort services sends on, of any kind: services asks them first,
        // so that a packet to no service leaves it after one lookup a key; those of policy Local
        // and of chains of their own are told apart next, and the rest are plain.
        b.set(NftSet.set(nf, t, SERVICE_IPS, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("ClusterIP, external and load-balancer IP ports services sends on"));
        b.set(NftSet.set(nf, t, SERVICE_NODEPORTS, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("NodePorts services sends on"));
        if (ownChains) {
            b.set(NftSet.map(nf, t, SERVICE_CHAINS, DataType.VERDICT, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("IP ports of services with chains of their own or past 1,024 endpoints"));
        }
        if (ownNodePortChains) {
            b.set(NftSet.map(nf, t, NODEPORT_CHAINS, DataType.VERDICT, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("NodePorts of services with chains of their own or past 1,024 endpoints"));
        }
        // The maps from "frontend . index" to endpoint are the pick trees' (PickTree#bucket).
        // externalTrafficPolicy Local, as data: the external frontends, their local endpoints by
        // index in the local trees' maps, and the ones with none here.
        b.set(NftSet.set(nf, t, LOCAL_IPS, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("external and load-balancer IP ports of externalTrafficPolicy Local"));
        b.set(NftSet.set(nf, t, LOCAL_NODEPORTS, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("NodePorts of externalTrafficPolicy Local"));
        if (externalLocalBlocks.contains(IP_EXTERNAL_LOCAL_BLOCKS)) {
            b.set(NftSet.map(nf, t, IP_EXTERNAL_LOCAL_BLOCKS, DataType.VERDICT, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("policy Local IP ports past 1,024 endpoints: pods and the node to their block"));
        }
        if (externalLocalBlocks.contains(NODEPORT_EXTERNAL_LOCAL_BLOCKS)) {
            b.set(NftSet.map(nf, t, NODEPORT_EXTERNAL_LOCAL_BLOCKS, DataType.VERDICT, DataType.INET_PROTO, DataType.INET_SERVICE)
                    .withComment("policy Local NodePorts past 1,024 endpoints: pods and the node to their block"));
        }
        b.set(NftSet.set(nf, t, NO_LOCAL_ENDPOINT, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("policy Local IP ports without an endpoint here: external traffic dropped"));
        b.set(NftSet.set(nf, t, NODEPORT_NO_LOCAL_ENDPOINT, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("policy Local NodePorts without an endpoint here: external traffic dropped"));
        b.set(NftSet.set(nf, t, NO_ENDPOINT_REJECT, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("service IP ports without any endpoint: rejected"));
        b.set(NftSet.set(nf, t, NO_ENDPOINT_DROP, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("service IP ports without a usable endpoint here: dropped"));
        b.set(NftSet.set(nf, t, NODEPORT_NO_ENDPOINT_REJECT, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("NodePorts without any endpoint: rejected"));
        b.set(NftSet.set(nf, t, NODEPORT_NO_ENDPOINT_DROP, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("NodePorts without a usable endpoint here: dropped"));
        b.set(NftSet.set(nf, t, UNSERVED_IPS, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("service IP ports rejected or dropped: the two sets above"));
        b.set(NftSet.set(nf, t, UNSERVED_NODEPORTS, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("NodePorts rejected or dropped: the two sets above"));
        b.set(NftSet.set(nf, t, FIREWALL_IPS, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("load-balancer IP ports with loadBalancerSourceRanges"));
        // Interval sets of concatenations (the kernel's pipapo) for the ports' ranges, so that a
        // service's ranges are elements: adding, changing or removing them validates no chain,
        // as a chain per service with a verdict element leading to it did. Sharded by the
        // load-balancer IP's last byte (see FIREWALL_SHARDS), through a map from the byte to the
        // shard's chain; a shard (its set, chain and element) only while some IP of it has ranges,
        // and none of it while none has: traffic then pays no lookup for it.
        if (!shards.isEmpty()) {
            b.set(NftSet.map(nf, t, FIREWALL_SHARD_MAP, DataType.VERDICT, a)
                    .withComment("a destination's last byte: the shard of its source ranges"));
        }
        for (int k : shards) {
            b.set(NftSet.set(nf, t, firewallAllow(k), a, DataType.INET_PROTO, DataType.INET_SERVICE, a)
                    .withFlags(NfTablesUapi.NFT_SET_INTERVAL)
                    .withComment("load-balancer IP port . source range, IPs ending in " + k
                            + ": the sources loadBalancerSourceRanges let in"));
            byte[] last = new byte[b.f.addressBytes()];
            last[last.length - 1] = (byte) k;
            b.element(FIREWALL_SHARD_MAP, SetElement.of(Bytes.of(last), Verdict.goTo(firewallShardChain(k))));
        }
        b.set(NftSet.set(nf, t, CLUSTER_IP_PORTS, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("ClusterIP ports, masqueraded when reached from outside the cluster CIDR"));
        b.set(NftSet.set(nf, t, EXTERNAL_MASQ, a, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("external and load-balancer IP ports of externalTrafficPolicy Cluster services"));
        b.set(NftSet.set(nf, t, NODEPORT_MASQ, DataType.INET_PROTO, DataType.INET_SERVICE)
                .withComment("NodePorts of externalTrafficPolicy Cluster services"));
        b.set(NftSet.set(nf, t, CLUSTER_IPS, a).withComment("every ClusterIP"));
        // Hairpin traffic (an endpoint reaching itself through a service) is masqueraded, as
        // kube-proxy does when a connection's source is the endpoint it was sent to. The kernel
        // compares the two addresses through this set, which it writes itself: each DNATed
        // connection adds "source . source", then "source . destination" is looked up, which only
        // a pair of equal addresses finds. A set of every "endpoint . endpoint", as before, held a
        // million elements at 100,000 services of 10 endpoints (40% of a full sync's elements and
        // a third of its kernel time); this holds the sources of the last second's new service
        // connections. (A bitwise XOR of the two registers says the same from Linux 6.13, but nft
        // 1.0.6, Debian 12's, aborts listing a rule that has one: "BUG: invalid bitwise operation 5".)
        b.set(NftSet.set(nf, t, HAIRPIN, a, a).withFlags(NfTablesUapi.NFT_SET_EVAL).withTimeout(HAIRPIN_TIMEOUT_MS)
                .withSize(KERNEL_WRITTEN_SET_SIZE)
                .withComment("source . source of new service connections, written by the kernel: hairpin checks"));
        b.unmanaged.add(HAIRPIN);
        if (config.serviceCounters()) {
            b.set(NftSet.set(nf, t, CHAIN_ENDPOINTS, a, DataType.INET_PROTO, DataType.INET_SERVICE, a, DataType.INET_SERVICE)
                    .withComment("service IP . port . endpoint . port of services with chains: counts their connections"));
        }
        // One set for every service's ClientIP affinity (the kernel writes it, each entry with
        // its service's timeout): a set per endpoint made the kernel look sets up by name in
        // a list, and a full sync with 14,000 of them took 20 s at 10k services.
        // Five fields at most: nf_tables names a concatenated type in 32 bits, 6 per field. The
        // protocol is left out: a TCP and a UDP port of one service sharing an endpoint share
        // the client's memory of it, which sends the client to the same pod either way.
        b.set(NftSet.set(nf, t, AFFINITY, a, a, DataType.INET_SERVICE, a, DataType.INET_SERVICE)
                .withFlags(NfTablesUapi.NFT_SET_EVAL).withTimeout(AFFINITY_DEFAULT_MS).withSize(KERNEL_WRITTEN_SET_SIZE)
                .withComment("client . service IP . port . endpoint . port: ClientIP session affinity"));
        b.unmanaged.add(AFFINITY);
        b.set(NftSet.set(nf, t, NODEPORT_ADDRS, a).withFlags(NfTablesUapi.NFT_SET_INTERVAL)
                .withComment("addresses NodePorts are served on"));
        b.set(NftSet.set(nf, t, CLUSTER_CIDRS, a).withFlags(NfTablesUapi.NFT_SET_INTERVAL).withComment("pod network"));
        b.set(NftSet.set(nf, t, SERVICE_CIDRS, a).withFlags(NfTablesUapi.NFT_SET_INTERVAL)
                .withComment("service network: unallocated IPs are dropped"));

        // Every address, when it comes to that, but loopback's, as kube-proxy: a NodePort on
        // 127.0.0.1 would take a local listener's port, and its DNAT to a pod cannot route.
        intervals(NODEPORT_ADDRS, NodePortAddresses.of(config, node, f), NodePortAddresses.loopback(f));
        // The networks local traffic comes from: the cluster's or this node's pod CIDRs.
        intervals(CLUSTER_CIDRS, config.localDetection().cidrs(config, node, f));
        intervals(SERVICE_CIDRS, serviceCidrs);

        b.chain(Chain.regular(nf, t, MARK_FOR_MASQUERADE), List.of(b.rule(MARK_FOR_MASQUERADE, RuleParts.setMark(config.masqueradeMark()))));
        b.chain(Chain.regular(nf, t, MASQUERADING), List.of(
                b.rule(MASQUERADING, concat(concat(RuleParts.ctStatusDnat(), p.hairpinCheck(HAIRPIN).toArray(new Expr[0])),
                        verdict(Verdict.jump(MARK_FOR_MASQUERADE)))),
                b.rule(MASQUERADING, concat(RuleParts.markClear(config.masqueradeMark()), verdict(Verdict.RETURN))),
                b.rule(MASQUERADING, RuleParts.flipMark(config.masqueradeMark())),
                b.rule(MASQUERADING, List.of(Masq.fullyRandom()))));

        List<Rule> services = new ArrayList<>();
        // The cheap thing first: a packet that is neither an IP port nor a NodePort of a service
        // returns after two hash lookups, without asking each kind's set (and no FIB).
        services.add(b.rule(SERVICES, concat(concat(p.daddrProtoPort(), RuleParts.notIn(SERVICE_IPS)),
                concat(p.protoPort(), RuleParts.notIn(SERVICE_NODEPORTS), verdict(Verdict.RETURN)))));
        // Which connections to a ClusterIP are masqueraded is the family's (ServicePlan#clusterIpMasquerade):
        // one rule for every ClusterIP port.
        switch (b.policy().clusterIpMasquerade()) {
            case ALL -> services.add(b.rule(SERVICES, concat(p.daddrProtoPort(), RuleParts.lookup(CLUSTER_IP_PORTS),
                    verdict(Verdict.jump(MARK_FOR_MASQUERADE)))));
            case NOT_FROM_PODS -> {
                List<Expr> e = new ArrayList<>(p.daddrProtoPort());
                e.add(RuleParts.lookup(CLUSTER_IP_PORTS));
                e.addAll(b.podTraffic(true));
                e.add(verdict(Verdict.jump(MARK_FOR_MASQUERADE)));
                services.add(b.rule(SERVICES, e));
            }
            case NONE -> { }
        }
        services.add(b.rule(SERVICES, concat(p.daddrProtoPort(), RuleParts.lookup(EXTERNAL_MASQ),
                verdict(Verdict.jump(MARK_FOR_MASQUERADE)))));
        // Policy Local and chains of their own before the plain ports, which are the rest.
        services.add(b.rule(SERVICES, concat(p.daddrProtoPort(), RuleParts.lookup(LOCAL_IPS), verdict(Verdict.goTo(IP_EXTERNAL_LOCAL)))));
        if (ownChains) {
            services.add(b.rule(SERVICES, concat(p.daddrProtoPort(), RuleParts.vmap(SERVICE_CHAINS))));
        }
        if (tree(PickTree.Kind.IP)) {
            services.add(b.rule(SERVICES, concat(p.daddrProtoPort(), RuleParts.lookup(SERVICE_IPS), verdict(Verdict.goTo(PickTree.Kind.IP.root())))));
        }
        // A NodePort: addressed to this node, on an address NodePorts are served on, by protocol
        // and port. The protocol and port are asked for first: a hash lookup that fails for
        // every packet that is no NodePort, which then pays no FIB lookup.
        List<Expr> toThisNode = concat(RuleParts.daddrLocal(), p.loadDaddr(NfTablesUapi.NFT_REG_1),
                RuleParts.lookup(NODEPORT_ADDRS));
        services.add(b.rule(SERVICES, nodePort(NODEPORT_MASQ, toThisNode, verdict(Verdict.jump(MARK_FOR_MASQUERADE)))));
        services.add(b.rule(SERVICES, nodePort(LOCAL_NODEPORTS, toThisNode, verdict(Verdict.goTo(NODEPORT_EXTERNAL_LOCAL)))));
        if (ownNodePortChains) {
            services.add(b.rule(SERVICES, concat(concat(toThisNode, p.protoPort()), RuleParts.vmap(NODEPORT_CHAINS))));
        }
        if (tree(PickTree.Kind.NODEPORT)) {
            services.add(b.rule(SERVICES, nodePort(SERVICE_NODEPORTS, toThisNode, verdict(Verdict.goTo(PickTree.Kind.NODEPORT.root())))));
        }
        b.chain(Chain.regular(nf, t, SERVICES), services);
        externalLocal(IP_EXTERNAL_LOCAL, PickTree.Kind.IP, p.daddrProtoPort(), NO_LOCAL_ENDPOINT);
        externalLocal(NODEPORT_EXTERNAL_LOCAL, PickTree.Kind.NODEPORT, p.protoPort(), NODEPORT_NO_LOCAL_ENDPOINT);

        // One shared chain per kind and endpoint count k picks uniformly among a port's k
        // endpoints, and one per affinity timeout and k remembers what it picked: a service is
        // then only elements, and changing it never changes a rule.
        b.merge(picks);

        // The checks ask one set, of every frontend rejected or dropped, and send those to the
        // chain that tells which: a connection to a served frontend or to no service pays one lookup.
        b.chain(Chain.regular(nf, t, SERVICE_ENDPOINTS_CHECK), List.of(
                b.rule(SERVICE_ENDPOINTS_CHECK, concat(p.daddrProtoPort(), RuleParts.lookup(UNSERVED_IPS),
                        verdict(Verdict.goTo(SERVICE_ENDPOINTS_UNSERVED))))));
        b.chain(Chain.regular(nf, t, SERVICE_ENDPOINTS_UNSERVED), List.of(
                b.rule(SERVICE_ENDPOINTS_UNSERVED, concat(p.daddrProtoPort(), RuleParts.lookup(NO_ENDPOINT_REJECT), p.reject())),
                b.rule(SERVICE_ENDPOINTS_UNSERVED, concat(p.daddrProtoPort(), RuleParts.lookup(NO_ENDPOINT_DROP),
                        verdict(Verdict.DROP)))));
        b.chain(Chain.regular(nf, t, NODEPORT_ENDPOINTS_CHECK), List.of(
                b.rule(NODEPORT_ENDPOINTS_CHECK, nodePort(UNSERVED_NODEPORTS, toThisNode, verdict(Verdict.goTo(NODEPORT_ENDPOINTS_UNSERVED))))));
        b.chain(Chain.regular(nf, t, NODEPORT_ENDPOINTS_UNSERVED), List.of(
                b.rule(NODEPORT_ENDPOINTS_UNSERVED, concat(p.protoPort(), RuleParts.lookup(NODEPORT_NO_ENDPOINT_REJECT), p.reject())),
                b.rule(NODEPORT_ENDPOINTS_UNSERVED, concat(p.protoPort(), RuleParts.lookup(NODEPORT_NO_ENDPOINT_DROP),
                        verdict(Verdict.DROP)))));
        b.chain(Chain.regular(nf, t, CLUSTER_IPS_CHECK), List.of(
                b.rule(CLUSTER_IPS_CHECK, List.of(p.loadDaddr(NfTablesUapi.NFT_REG_1),
                        RuleParts.lookup(CLUSTER_IPS), p.reject())),
                b.rule(CLUSTER_IPS_CHECK, List.of(p.loadDaddr(NfTablesUapi.NFT_REG_1),
                        RuleParts.lookup(SERVICE_CIDRS), verdict(Verdict.DROP)))));
        if (!shards.isEmpty()) {
            b.chain(Chain.regular(nf, t, FIREWALL_CHECK), List.of(
                    b.rule(FIREWALL_CHECK, concat(p.daddrShardBits(), RuleParts.vmap(FIREWALL_SHARD_MAP)))));
        }
        for (int k : shards) {
            String shard = firewallShardChain(k);
            b.chain(Chain.regular(nf, t, shard), List.of(
                    b.rule(shard, concat(concat(p.daddrProtoPortSaddrForRanges(), RuleParts.lookup(firewallAllow(k))),
                            verdict(Verdict.RETURN))),
                    b.rule(shard, concat(concat(p.daddrProtoPort(), RuleParts.lookup(FIREWALL_IPS)),
                            verdict(Verdict.DROP)))));
        }

        // Base chains: NAT at the usual priorities, filters around them (see docs/ruleset.md).
        base("nat-prerouting", "nat", Hook.PREROUTING, -100, jumpIfNew(false, SERVICES));
        base("nat-output", "nat", Hook.OUTPUT, -100, jumpIfNew(false, SERVICES));
        base("nat-postrouting", "nat", Hook.POSTROUTING, 100, jumpIfNew(false, MASQUERADING));
        String[] firewall = shards.isEmpty() ? new String[0] : new String[] {FIREWALL_CHECK};
        base("filter-prerouting", "filter", Hook.PREROUTING, -110, jumpIfNew(true, firewall));
        // After the DNAT, while some port is sticky: its clients are remembered by the endpoint
        // they were sent to (StickyPick), on each path a DNATed connection takes (delivered here,
        // routed on, sent from here).
        String[] remember = picks.chains().containsKey(STICKY_REMEMBER) ? new String[] {STICKY_REMEMBER} : new String[0];
        List<List<Expr>> input = new ArrayList<>(jumpIfNew(true, NODEPORT_ENDPOINTS_CHECK, SERVICE_ENDPOINTS_CHECK));
        input.addAll(jumpIfNew(true, remember));
        base("filter-input", "filter", Hook.INPUT, -110, input);
        List<List<Expr>> forward = new ArrayList<>();
        if (b.config.dropInvalid()) {
            // As kube-proxy: a segment conntrack cannot place (out of the TCP window, say) would
            // reach the client without reverse NAT and reset its connection (kubernetes issues
            // 74839 and 117924). Not installed when nf_conntrack_tcp_be_liberal is set.
            forward.add(concat(RuleParts.ctStateInvalid(), verdict(Verdict.DROP)));
        }
        forward.addAll(jumpIfNew(true, SERVICE_ENDPOINTS_CHECK, CLUSTER_IPS_CHECK));
        forward.addAll(jumpIfNew(true, remember));
        base("filter-forward", "filter", Hook.FORWARD, -110, forward);
        List<List<Expr>> output = new ArrayList<>(jumpIfNew(true, SERVICE_ENDPOINTS_CHECK, NODEPORT_ENDPOINTS_CHECK));
        output.addAll(jumpIfNew(true, firewall));
        base("filter-output", "filter", Hook.OUTPUT, -110, output);
        // After the output DNAT (-100): what is still addressed to a ClusterIP found no service port.
        List<List<Expr>> postDnat = new ArrayList<>(jumpIfNew(true, CLUSTER_IPS_CHECK));
        postDnat.addAll(jumpIfNew(true, remember));
        base("filter-output-post-dnat", "filter", Hook.OUTPUT, -90, postDnat);
    }

    /**
     * External traffic to a frontend of policy Local: this node's pods and the node itself reach
     * every endpoint (the node masqueraded, as if it had left and come back through a load
     * balancer), through the cluster tree on the frontend's cluster count; the rest is dropped
     * when the node has no endpoint of the port, else picks among the node's endpoints through the
     * local tree. The same for every such port: a port is only its elements, as a plain one.
     */
    private void externalLocal(String chain, PickTree.Kind kind, List<Expr> key, String none) {
        List<Rule> rules = new ArrayList<>();
        // A frontend here has cluster endpoints (a superset of this node's): the cluster tree is
        // in use whenever one is, the local tree whenever one has endpoints here.
        // The steps of ServicePlan#externalLocal for every port at once: the cluster steps for
        // frontends with cluster endpoints (all of them here, while the tree is in use), the rest
        // to this node's endpoints where the port has some (the local tree) and dropped where not.
        ExternalLocalSteps steps = ExternalLocalSteps.of(b.policy(), tree(kind), tree(kind.local()));
        // A frontend whose cluster count is past the root's blocks: to its block, by a verdict
        // element, before the root (only while some frontend is: a lookup for pods' and the
        // node's traffic to any Local frontend).
        String blocks = kind.ip ? IP_EXTERNAL_LOCAL_BLOCKS : NODEPORT_EXTERNAL_LOCAL_BLOCKS;
        boolean big = externalLocalBlocks.contains(blocks);
        if (steps.podsToCluster()) {
            if (big) {
                rules.add(b.rule(chain, concat(concat(b.podTraffic(false), key), RuleParts.vmap(blocks))));
            }
            rules.add(b.rule(chain, concat(b.podTraffic(false), verdict(Verdict.goTo(kind.root())))));
        }
        if (steps.nodeToCluster()) {
            rules.add(b.rule(chain, concat(RuleParts.saddrLocal(), verdict(Verdict.jump(MARK_FOR_MASQUERADE)))));
            if (big) {
                rules.add(b.rule(chain, concat(concat(RuleParts.saddrLocal(), key), RuleParts.vmap(blocks))));
            }
            rules.add(b.rule(chain, concat(RuleParts.saddrLocal(), verdict(Verdict.goTo(kind.root())))));
        }
        rules.add(b.rule(chain, concat(concat(key, RuleParts.lookup(none)), verdict(Verdict.DROP))));
        if (steps.restToLocal()) {
            rules.add(b.rule(chain, List.of(verdict(Verdict.goTo(kind.local().root())))));
        }
        b.chain(Chain.regular(nf, t, chain), rules);
    }

    /** Whether the tree of this kind is declared: while some frontend picks through it. */
    private boolean tree(PickTree.Kind kind) {
        return picks.chains().containsKey(kind.root());
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
        if (!TableNames.BASE_CHAINS.contains(name)) {
            throw new IllegalStateException("base chain " + name + " is not in TableNames.BASE_CHAINS");
        }
        List<Rule> rs = new ArrayList<>();
        for (List<Expr> r : rules) {
            rs.add(b.rule(name, r));
        }
        b.chain(Chain.base(nf, t, name, type, hook, prio), rs);
    }

    /** CIDRs as interval elements: merged, each a start and an end one past it (none at the top of the space). */
    void intervals(String set, List<Cidr> cidrs) {
        intervals(set, cidrs, null);
    }

    /** The CIDRs as an interval set's elements, without {@code except} (null: nothing left out). */
    void intervals(String set, List<Cidr> cidrs, Cidr except) {
        for (Cidr.Range r : Cidr.merge(cidrs, except)) {
            b.element(set, SetElement.of(Bytes.ip(r.start())));
            if (r.endExclusive() != null) {
                b.element(set, new SetElement(Bytes.ip(r.endExclusive()), null, null, 0, 0, NfTablesUapi.NFT_SET_ELEM_INTERVAL_END));
            }
        }
    }
}
