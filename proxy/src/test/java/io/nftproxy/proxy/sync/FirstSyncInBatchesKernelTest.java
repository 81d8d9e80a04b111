package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.render.TableNames;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.DesiredChain;
import io.nftproxy.proxy.render.Fragment;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * A first sync onto a node without our tables goes in many transactions, and a reader of the
 * kernel between any two of them never finds a service reachable (its frontend in a set or map
 * that dispatches) without everything it needs (every element and chain of it); the batches end
 * where one transaction ends. Over the tables of a previous run, the new ruleset is written beside
 * them and switched to ({@link Takeover}): every service port stays reachable and whole throughout.
 */
class FirstSyncInBatchesKernelTest {
    private static final String TABLE = "nftproxy";
    /** Where a frontend's presence makes its service reachable. */
    private static final Set<String> ENTRY_SETS = Set.of(TableNames.SERVICE_IPS, TableNames.SERVICE_NODEPORTS,
            TableNames.SERVICE_CHAINS, TableNames.NODEPORT_CHAINS, TableNames.LOCAL_IPS, TableNames.LOCAL_NODEPORTS,
            TableNames.NO_ENDPOINT_REJECT,
            TableNames.NO_ENDPOINT_DROP, TableNames.NODEPORT_NO_ENDPOINT_REJECT, TableNames.NODEPORT_NO_ENDPOINT_DROP);

    static ProxyConfig config() {
        return ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse("192.168.50.2")))
                .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16")))
                .build();
    }

    /**
     * Services of every shape: plain, sticky, Local, without endpoints, two ports, over 128
     * endpoints (data in a block of the trees), over 1,024 (and those Local and sticky: chains of
     * their own), and one dual-stack (svc-7).
     */
    static ProxyState state(int n) {
        Map<ServicePortName, ServicePort> svcs = new LinkedHashMap<>();
        Map<ServicePortName, List<Endpoint>> eps = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            String name = "svc-" + i;
            // svc-7 is dual-stack: the node has IPv6 only for it, so its ip6 table goes with it.
            var cip = i == 7 ? List.of(Inet.parse("10.96.0.8"), Inet.parse("fd00:96::7"))
                    : List.of(Inet.parse("10.96." + (i / 250) + "." + (i % 250 + 1)));
            int k = i % 40 == 0 ? NftRenderer.MAX_PLAIN_PICK + 6 : i == 5 || i == 11 || i % 20 == 0 ? 130 : i % 10 == 2 ? 0 : 1 + i % 12;
            List<Endpoint> list = new ArrayList<>();
            for (int e = 0; e < k; e++) {
                list.add(Endpoint.ready(Inet.parse("10." + (244 - e / 250) + "." + (i % 200) + "." + (e % 250 + 2)), 8080,
                        e % 3 == 0 ? "node-a" : "node-b"));
            }
            List<String> ports = i % 10 == 3 ? List.of("http", "https") : List.of("http");
            for (int p = 0; p < ports.size(); p++) {
                ServicePortName id = new ServicePortName("ns", name, ports.get(p), Protocol.TCP);
                ServicePort.Builder b = ServicePort.builder(id, 80 + p).clusterIPs(cip).nodePort(30000 + 2 * i + p);
                if (i % 10 == 0) {
                    b.externalPolicyLocal(true).loadBalancerIPs(List.of(Inet.parse("203.0.113." + (i / 10 % 250 + 1))));
                    if (i % 20 == 0) {
                        b.affinitySeconds(60);
                    }
                } else if (i % 10 == 1) {
                    b.affinitySeconds(60 + i % 2);
                }
                svcs.put(id, b.build());
                eps.put(id, list);
            }
        }
        return new ProxyState(svcs, eps, NodeInfo.named("node-a"));
    }

    @Test
    void everyBatchLeavesOnlyWholeServicesReachable() throws Exception {
        Kernel.require();
        NftRenderer renderer = new NftRenderer(config());
        ProxyState state = state(240);
        Map<ServicePortName, Fragment> expected = fragments(renderer, state);
        try (TestNetns ns = TestNetns.create("nftp-batches"); TestNetns one = TestNetns.create("nftp-onebatch");
             NftClient writer = NftClient.open(ns.ns()); NftClient reader = NftClient.open(ns.ns());
             NftClient single = NftClient.open(one.ns())) {
            Syncer syncer = new Syncer(writer, renderer, TABLE);
            syncer.firstSyncBatch(200);
            List<Set<ServicePortName>> reachable = new ArrayList<>();
            syncer.commitThrough(tx -> {
                CommitStats st = writer.commit(tx);
                reachable.add(checkWhole(reader, expected, Generation.FIRST));
                return st;
            });
            SyncResult r = syncer.sync(state, null);
            syncer.commitThrough(writer::commit);
            assertTrue(r.rejectedServices().isEmpty(), r.rejectedServices().toString());

            List<Integer> counts = reachable.stream().map(Set::size).toList();
            assertTrue(reachable.size() > 10, "the first sync went in many transactions: " + counts);
            assertEquals(0, counts.get(0), "the first transaction holds the globals only");
            assertEquals(expected.keySet(), reachable.get(reachable.size() - 1), "every service port is reachable in the end");
            long between = counts.stream().filter(c -> c > 0 && c < expected.size()).count();
            assertTrue(between > 5, "a reader saw services arrive batch by batch: " + counts);
            for (int i = 1; i < reachable.size(); i++) {
                assertTrue(reachable.get(i).containsAll(reachable.get(i - 1)), "a service once reachable stays: " + counts);
            }
            // Both ports of a service arrive together; services that own chains come before the
            // others, while the table the kernel validates for them is small.
            Set<ServicePortName> owners = new HashSet<>();
            expected.forEach((id, f) -> {
                if (!f.chains().isEmpty()) {
                    owners.add(id);
                }
            });
            assertTrue(owners.size() >= 5, "the state has services that own chains: " + owners.size());
            for (Set<ServicePortName> seen : reachable) {
                for (ServicePortName id : seen) {
                    assertTrue(seen.contains(new ServicePortName("ns", id.name(), "http", Protocol.TCP)), id + " without its http port");
                    if (!owners.contains(id)) {
                        assertTrue(seen.containsAll(owners), id + " came before a service that owns chains");
                    }
                }
            }

            // A later sync is a partial one again, on top of the batches' table.
            ServicePortName first = expected.keySet().iterator().next();
            ProxyState next = withOneMoreEndpoint(state, first);
            assertFalse(syncer.sync(next, Set.of(first)).full(), "the next sync is partial");

            // The batches end where one transaction ends.
            Syncer oneTx = new Syncer(single, renderer, TABLE);
            oneTx.firstSyncBatch(0);
            int[] commits = {0};
            oneTx.commitThrough(counting(single, commits));
            oneTx.sync(state, null);
            oneTx.sync(next, Set.of(first));
            assertEquals(2, commits[0], "firstSyncBatch(0): the first sync is one transaction");
            sameTable(single.readTable(Family.IP, TABLE), writer.readTable(Family.IP, TABLE));
            sameTable(single.readTable(Family.IP6, TABLE), writer.readTable(Family.IP6, TABLE));
        }
    }

    @Test
    void aTableOfAPreviousRunIsTakenOverBesideItWholeAtEveryMoment() throws Exception {
        Kernel.require();
        NftRenderer renderer = new NftRenderer(config());
        ProxyState before = state(60);
        // The restart's state: one service gone, one new (over 1,024 endpoints, Local, sticky: chains of its own).
        ProxyState grown = state(61);
        Map<ServicePortName, ServicePort> svcs = new LinkedHashMap<>(grown.services());
        svcs.keySet().removeIf(id -> id.name().equals("svc-7"));
        ProxyState after = new ProxyState(svcs, grown.endpoints(), grown.node());
        Map<ServicePortName, Fragment> was = fragments(renderer, before);
        Map<ServicePortName, Fragment> will = fragments(renderer, after);
        try (TestNetns ns = TestNetns.create("nftp-takeover"); TestNetns one = TestNetns.create("nftp-takeone");
             NftClient writer = NftClient.open(ns.ns()); NftClient reader = NftClient.open(ns.ns());
             NftClient single = NftClient.open(one.ns())) {
            new Syncer(writer, renderer, TABLE).sync(before, null);
            // What a takeover that stopped half-way leaves: the other generation's sets and chains, unreachable.
            String leftover = Generation.SECOND.set("leftover");
            String target = Generation.SECOND.chain("leftover-target");
            List<SetElement> jumps = new ArrayList<>();
            for (int i = 0; i < 250; i++) {
                jumps.add(SetElement.of(Bytes.be32(i), Verdict.jump(target)));
            }
            writer.commit(new Transaction().add(NftSet.map(Family.IP, TABLE, leftover, DataType.VERDICT, DataType.INTEGER))
                    .add(Chain.regular(Family.IP, TABLE, target)).add(Chain.regular(Family.IP, TABLE, leftover))
                    .add(Rule.of(Family.IP, TABLE, leftover, List.of(Immediate.verdict(Verdict.jump(target)))))
                    .add(new Elements(Family.IP, TABLE, leftover, jumps)));

            // A restart: each transaction leaves every service port whole and reachable, in the
            // generation the base chains reach; the old state's until the switch, the new one's after.
            Syncer restarted = new Syncer(writer, renderer, TABLE);
            restarted.firstSyncBatch(1000);
            List<Generation> inUse = new ArrayList<>();
            restarted.commitThrough(tx -> {
                CommitStats st = writer.commit(tx);
                Generation g = Takeover.inUse(reader, Takeover.list(reader, TABLE));
                Map<ServicePortName, Fragment> expected = g.equals(Generation.FIRST) ? was : will;
                assertEquals(expected.keySet(), checkWhole(reader, expected, g),
                        "every service port reachable and whole after transaction " + inUse.size() + " (" + g + ")");
                inUse.add(g);
                return st;
            });
            SyncResult r = restarted.sync(after, null);
            assertTrue(r.rejectedServices().isEmpty(), r.rejectedServices().toString());
            assertEquals(Generation.SECOND, restarted.generation());
            int switched = inUse.indexOf(Generation.SECOND);
            assertTrue(switched > 2, "written beside the table in use in many transactions: " + inUse);
            assertEquals(List.of(Generation.SECOND), List.copyOf(new HashSet<>(inUse.subList(switched, inUse.size()))),
                    "one switch: " + inUse);
            assertTrue(inUse.size() - switched > 1, "the old generation deleted in transactions of its own: " + inUse);
            assertFalse(writer.hasTable(Family.IP6, TABLE), "svc-7, IPv6's only port, went: the switch deleted the ip6 table");
            for (Family f : List.of(Family.IP)) {
                TableContents t = writer.readTable(f, TABLE);
                t.chains().stream().filter(c -> !c.isBase()).forEach(c -> assertEquals(Generation.SECOND, Generation.of(c.name()),
                        "chain " + c.name() + " of the old generation left"));
                t.sets().stream().filter(s -> !s.has(NfTablesUapi.NFT_SET_ANONYMOUS)).forEach(s -> assertEquals(
                        Generation.SECOND, Generation.of(s.name()), "set " + s.name() + " of the old generation left"));
                assertTrue(t.chains().stream().noneMatch(c -> c.name().startsWith("leftover")), "the leftovers are gone");
                assertTrue(t.sets().stream().noneMatch(c -> c.name().startsWith("leftover")), "the leftovers are gone");
            }

            // Later syncs are partial ones, in the generation in use.
            ServicePortName changed = will.keySet().iterator().next();
            ProxyState next = withOneMoreEndpoint(after, changed);
            restarted.commitThrough(writer::commit);
            assertFalse(restarted.sync(next, Set.of(changed)).full(), "the next sync is partial");

            // Restarted again: back to generation 0, the table one first sync writes.
            Syncer again = new Syncer(writer, renderer, TABLE);
            again.sync(next, null);
            assertEquals(Generation.FIRST, again.generation());
            Syncer oneTx = new Syncer(single, renderer, TABLE);
            oneTx.firstSyncBatch(0);
            oneTx.sync(next, null);
            sameTable(single.readTable(Family.IP, TABLE), writer.readTable(Family.IP, TABLE));
            assertFalse(single.hasTable(Family.IP6, TABLE) || writer.hasTable(Family.IP6, TABLE), "no ip6 table without IPv6");
        }
    }

    /** {@code state} with one endpoint more for {@code id}: a change for a partial sync. */
    private static ProxyState withOneMoreEndpoint(ProxyState state, ServicePortName id) {
        List<Endpoint> more = new ArrayList<>(state.endpointsOf(id));
        more.add(Endpoint.ready(Inet.parse("10.244.250.9"), 8080, "node-b"));
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>(state.endpoints());
        eps.put(id, more);
        return new ProxyState(state.services(), eps, state.node());
    }

    /** What each service port is made of, rendered as a first sync renders it (IPv4). */
    private static Map<ServicePortName, Fragment> fragments(NftRenderer renderer, ProxyState state) {
        Map<ServicePortName, Fragment> out = new TreeMap<>();
        state.services().forEach((id, svc) -> out.put(id,
                renderer.service(IpFamily.V4, svc, state.endpointsOf(id), state.node())));
        return out;
    }

    /** Commits through {@code client}, counting the commits in {@code count[0]}. */
    private static Syncer.Committer counting(NftClient client, int[] count) {
        return tx -> {
            count[0]++;
            return client.commit(tx);
        };
    }

    /**
     * Reads the kernel: the entry sets first, then everything else (a first sync only adds, so
     * whatever was reachable at the first read is all there at the second), and fails unless
     * every reachable service port is whole. Returns the reachable ones.
     */
    private static Set<ServicePortName> checkWhole(NftClient reader, Map<ServicePortName, Fragment> expected, Generation g)
            throws NftException {
        Map<String, Map<Bytes, Data>> entries = new HashMap<>();
        for (String set : ENTRY_SETS) {
            entries.put(set, elements(reader, g.set(set)));
        }
        Map<String, Map<Bytes, Data>> all = new HashMap<>();
        Set<ServicePortName> reachable = new HashSet<>();
        for (Map.Entry<ServicePortName, Fragment> e : expected.entrySet()) {
            Fragment f = e.getValue();
            boolean entered = false;
            for (Map.Entry<String, List<SetElement>> els : f.elements().entrySet()) {
                if (ENTRY_SETS.contains(els.getKey())) {
                    for (SetElement el : els.getValue()) {
                        entered |= entries.get(els.getKey()).containsKey(el.key());
                    }
                }
            }
            if (!entered) {
                continue;
            }
            reachable.add(e.getKey());
            for (Map.Entry<String, List<SetElement>> els : f.elements().entrySet()) {
                Map<Bytes, Data> there = all.get(els.getKey());
                if (there == null) {
                    there = elements(reader, g.set(els.getKey()));
                    all.put(els.getKey(), there);
                }
                for (SetElement el : els.getValue()) {
                    if (!there.containsKey(el.key()) || !Objects.equals(there.get(el.key()), in(g, el.data()))) {
                        fail(e.getKey() + " is reachable but " + els.getKey() + " lacks " + el);
                    }
                }
            }
            for (DesiredChain c : f.chains().values()) {
                List<Rule> rules;
                try {
                    rules = reader.listRules(Family.IP, TABLE, g.chain(c.chain().name()));
                } catch (NftException ex) {
                    rules = List.of();
                }
                assertTrue(ResendSlices.sameRules(c.rules().stream().map(g::rule).toList(), rules), e.getKey()
                        + " is reachable but chain "
                        + c.chain().name() + " is not whole");
            }
        }
        return reachable;
    }

    /** An element's data as generation {@code g} writes it: a jump names the chain in g. */
    private static Data in(Generation g, Data d) {
        return d instanceof Verdict v && v.chain() != null ? new Verdict(v.kind(), g.chain(v.chain())) : d;
    }

    /**
     * A set's elements as the kernel holds them: {@link NftClient#listElements} reads a large hash
     * set again when the kernel resized it during the dump (seen here before it did: 5,554 of
     * 6,178 elements in one dump, all of them in the next).
     */
    private static Map<Bytes, Data> elements(NftClient reader, String set) throws NftException {
        Map<Bytes, Data> out = new HashMap<>();
        try {
            for (SetElement el : reader.listElements(Family.IP, TABLE, set)) {
                out.put(el.key(), el.data());
            }
        } catch (NftException e) {
            // not there yet (a service's own set)
        }
        return out;
    }

    /** Same chains with the same rules, same sets with the same elements (in any order). */
    private static void sameTable(TableContents want, TableContents got) {
        assertEquals(names(want), names(got), "the same chains and sets");
        for (var c : want.chains()) {
            assertTrue(ResendSlices.sameRules(want.rulesOf(c.name()), got.rulesOf(c.name())), "chain " + c.name());
        }
        for (NftSet s : want.sets()) {
            assertEquals(new HashSet<>(comparable(want.elements().get(s.name()))),
                    new HashSet<>(comparable(got.elements().get(s.name()))), "elements of " + s.name());
        }
    }

    private static Set<String> names(TableContents t) {
        Set<String> out = new HashSet<>();
        t.chains().forEach(c -> out.add("chain " + c.name()));
        t.sets().forEach(s -> out.add("set " + s.name()));
        return out;
    }

    private static List<String> comparable(List<SetElement> els) {
        List<String> out = new ArrayList<>();
        for (SetElement el : els == null ? List.<SetElement>of() : els) {
            out.add(el.key() + " " + el.keyEnd() + " " + el.data() + " " + el.timeoutMs() + " " + el.flags());
        }
        return out;
    }
}
