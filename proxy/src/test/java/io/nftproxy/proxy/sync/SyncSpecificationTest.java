package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.render.TableNames;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.MapKeys;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.render.Transitions;

/**
 * What a partial sync sends for each kind of change, printed as nft text: the syncer's behaviour
 * as a specification, without a kernel. The README's headline is the first case: one endpoint
 * replaced is element operations only, and the kernel validates no chain. Elements print as nft
 * prints them, by the types of the sets the (fake) kernel holds: an endpoint map's key is the
 * frontend and the endpoint's index ({@code 10.96.0.10 . tcp . 80 . 0x00000001}), its data the
 * endpoint's address and port.
 */
class SyncSpecificationTest {
    static final ProxyConfig CFG = ProxyConfig.builder("node-a").nodeIPs(List.of(ip("192.168.50.2")))
            .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16")))
            .minSyncPeriod(Duration.ZERO).build();
    static final ServicePortName WEB = new ServicePortName("shop", "web", "http", Protocol.TCP);
    static final ServicePortName API = new ServicePortName("shop", "api", "http", Protocol.TCP);
    /**
     * A neighbour that stays: a ClusterIP and a NodePort of policy Local with an endpoint on this
     * node, so that the trees these cases pick through are in use before and after them (the
     * first frontend of a kind brings its tree, the last takes it away: {@link #aTreeComesWithItsFirstFrontend}).
     */
    static final ServicePortName NEIGHBOUR = new ServicePortName("kube-system", "neighbour", "dns", Protocol.TCP);

    static InetAddress ip(String s) {
        return Inet.parse(s);
    }

    static ServicePort web(boolean localExternal) {
        return ServicePort.builder(WEB, 80).clusterIPs(List.of(ip("10.96.0.10"))).nodePort(30080)
                .externalPolicyLocal(localExternal).build();
    }

    static Endpoint ep(String addr, String node) {
        return Endpoint.builder(ip(addr), 8080).node(node).build();
    }

    final List<String> sent = new ArrayList<>();
    FakeNfTables kernel;
    Syncer syncer;
    TreeMap<ServicePortName, ServicePort> services;
    Map<ServicePortName, List<Endpoint>> endpoints;
    NodeInfo node;

    /** The syncer's time: what a change keeps for packets crossing its commit goes when it has passed. */
    long now;

    @BeforeEach
    void firstSync() throws Exception {
        kernel = new FakeNfTables();
        syncer = new Syncer(kernel, new NftRenderer(CFG), "nftproxy");
        syncer.clock(() -> now);
        syncer.commitThrough(tx -> {
            sent.add(tx.toString(this::declared));
            return kernel.commit(tx);
        });
        services = new TreeMap<>(Map.of(WEB, web(false), NEIGHBOUR, ServicePort.builder(NEIGHBOUR, 53)
                .clusterIPs(List.of(ip("10.96.0.20"))).nodePort(30090).externalPolicyLocal(true).build()));
        endpoints = new HashMap<>(Map.of(WEB, List.of(ep("10.244.1.2", "node-b"), ep("10.244.1.3", "node-b")),
                NEIGHBOUR, List.of(ep("10.244.0.20", "node-a"))));
        node = new NodeInfo("node-a", null, List.of(ip("192.168.50.2")), false);
        syncer.sync(new ProxyState(services, endpoints, node), null);
        sent.clear();
    }

    /** A set the kernel holds, so that a transaction prints its elements as nft does. */
    private NftSet declared(Family family, String table, String name) {
        try {
            return kernel.hasTable(family, table) ? kernel.readTable(family, table).sets().stream()
                    .filter(x -> x.name().equals(name)).findFirst().orElse(null) : null;
        } catch (NftException e) {
            return null;
        }
    }

    /**
     * The two transactions of a partial sync that brings chains: the globals' growth (a tree, a
     * bucket: chains and sets, no service's element), then the rest, built on it.
     */
    List<String> syncInTwo(ServicePortName... changed) throws Exception {
        syncer.sync(new ProxyState(services, endpoints, node), Set.of(changed));
        assertEquals(2, sent.size(), "the structure, then the elements: " + sent);
        assertTrue(sent.get(0).lines().allMatch(l -> !l.startsWith("add element") && !l.startsWith("delete element")),
                "no element in the first: " + sent.get(0));
        return List.copyOf(sent);
    }

    /** What the next partial sync of {@code changed} sends (the node has no IPv6, and no ip6 table while no port has an IPv6 ClusterIP). */
    String sync(ServicePortName... changed) throws Exception {
        syncer.sync(new ProxyState(services, endpoints, node), Set.of(changed));
        assertEquals(1, sent.size(), "one transaction");
        return sent.get(0);
    }

    /**
     * What the sync loop sends once the last change's transitional elements are past their time
     * ({@link Transitions#GRACE}): a sync without changes that takes them away.
     */
    String afterGrace() throws Exception {
        sent.clear();
        assertEquals(syncer.dueNanos(), now + Transitions.GRACE.toNanos(), "the loop is asked to sync then");
        now += Transitions.GRACE.toNanos();
        syncer.sync(new ProxyState(services, endpoints, node), Set.of());
        assertEquals(Backend.NOTHING_DUE, syncer.dueNanos(), "nothing left to take away");
        assertEquals(1, sent.size(), "one transaction");
        return sent.get(0);
    }

    @Test
    void anEndpointReplacedIsElementsOnly() throws Exception {
        endpoints.put(WEB, List.of(ep("10.244.1.2", "node-b"), ep("10.244.1.4", "node-b")));
        assertEquals("""
                delete element ip nftproxy service-endpoints-1-8 { 10.96.0.10 . tcp . 80 . 0x00000001 }
                delete element ip nftproxy nodeport-endpoints-1-8 { tcp . 30080 . 0x00000001 }
                add element ip nftproxy service-endpoints-1-8 { 10.96.0.10 . tcp . 80 . 0x00000001 comment "shop/web:http" : 10.244.1.4 . 8080 }
                add element ip nftproxy nodeport-endpoints-1-8 { tcp . 30080 . 0x00000001 comment "shop/web:http" : 10.244.1.4 . 8080 }
                """, sync(WEB));
    }

    @Test
    void anEndpointAddedMovesTheServiceToTheNextPickChain() throws Exception {
        endpoints.put(WEB, List.of(ep("10.244.1.2", "node-b"), ep("10.244.1.3", "node-b"), ep("10.244.1.4", "node-b")));
        assertEquals("""
                delete element ip nftproxy ip-count-bit-0 { 10.96.0.10 . tcp . 80 }
                delete element ip nftproxy nodeport-count-bit-0 { tcp . 30080 }
                add element ip nftproxy service-endpoints-1-8 { 10.96.0.10 . tcp . 80 . 0x00000002 comment "shop/web:http" : 10.244.1.4 . 8080 }
                add element ip nftproxy nodeport-endpoints-1-8 { tcp . 30080 . 0x00000002 comment "shop/web:http" : 10.244.1.4 . 8080 }
                add element ip nftproxy ip-count-bit-1 { 10.96.0.10 . tcp . 80 comment "shop/web:http" }
                add element ip nftproxy nodeport-count-bit-1 { tcp . 30080 comment "shop/web:http" }
                """, sync(WEB));
    }

    /**
     * The count goes down at once; the index the endpoint held stays for a while
     * ({@link Transitions}): a packet that read the count's bits before the commit may still look
     * it up after it. The sync loop takes it away after {@link Transitions#GRACE}.
     */
    @Test
    void anEndpointRemoved() throws Exception {
        endpoints.put(WEB, List.of(ep("10.244.1.2", "node-b")));
        assertEquals("""
                delete element ip nftproxy ip-count-bit-0 { 10.96.0.10 . tcp . 80 }
                delete element ip nftproxy nodeport-count-bit-0 { tcp . 30080 }
                """, sync(WEB));
        assertEquals("""
                delete element ip nftproxy service-endpoints-1-8 { 10.96.0.10 . tcp . 80 . 0x00000001 }
                delete element ip nftproxy nodeport-endpoints-1-8 { tcp . 30080 . 0x00000001 }
                """, afterGrace());
    }

    /**
     * Nothing is kept for packets crossing this commit: one that misses the endpoint map after it
     * leaves the tree un-NATed and meets the new generation's checks, which reject it, as after
     * the commit ({@link Transitions}).
     */
    @Test
    void theLastEndpointRemovedRejects() throws Exception {
        endpoints.put(WEB, List.of());
        assertEquals("""
                delete element ip nftproxy service-ips { 10.96.0.10 . tcp . 80 }
                delete element ip nftproxy ip-count-bit-0 { 10.96.0.10 . tcp . 80 }
                delete element ip nftproxy service-endpoints-1-8 { 10.96.0.10 . tcp . 80 . 0x00000000, 10.96.0.10 . tcp . 80 . 0x00000001 }
                delete element ip nftproxy service-nodeports { tcp . 30080 }
                delete element ip nftproxy nodeport-count-bit-0 { tcp . 30080 }
                delete element ip nftproxy nodeport-endpoints-1-8 { tcp . 30080 . 0x00000000, tcp . 30080 . 0x00000001 }
                delete element ip nftproxy nodeport-masquerade { tcp . 30080 }
                add element ip nftproxy no-endpoint-reject { 10.96.0.10 . tcp . 80 comment "shop/web:http" }
                add element ip nftproxy unserved-ips { 10.96.0.10 . tcp . 80 comment "shop/web:http" }
                add element ip nftproxy nodeport-no-endpoint-reject { tcp . 30080 comment "shop/web:http" }
                add element ip nftproxy unserved-nodeports { tcp . 30080 comment "shop/web:http" }
                """, sync(WEB));
        assertEquals(Backend.NOTHING_DUE, syncer.dueNanos(), "nothing kept for later");
    }

    /**
     * Unless a change just before keeps elements a packet crossing this one could find: they
     * would send it to an endpoint of an earlier state, so this change keeps its own over them.
     * From 5 endpoints to 2, the sync keeps indices 2 to 5; back to 4, the port's own 2 and 3 hide
     * the kept ones; to none, a packet crossing that commit may look 2 and 3 up after it, and
     * finds the port's old endpoints, kept, not the ones of two states before.
     */
    @Test
    void theLastEndpointRemovedJustAfterAnotherChangeKeepsItsOwn() throws Exception {
        List<Endpoint> five = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            five.add(ep("10.244.1." + (10 + i), "node-b"));
        }
        for (List<Endpoint> eps : List.of(five, five.subList(0, 2), List.of(five.get(0), five.get(1),
                ep("10.244.1.20", "node-b"), ep("10.244.1.21", "node-b")))) {
            endpoints.put(WEB, eps);
            sent.clear();
            sync(WEB);
        }
        sent.clear();
        endpoints.put(WEB, List.of());
        String gone = sync(WEB);
        assertFalse(gone.contains("service-endpoints-1-8"), "the old endpoints kept: " + gone);
        assertTrue(syncer.dueNanos() != Backend.NOTHING_DUE, "and taken away later");
        now += Transitions.GRACE.toNanos();
        sent.clear();
        syncer.sync(new ProxyState(services, endpoints, node), Set.of());
        assertTrue(sent.get(0).contains("delete element ip nftproxy service-endpoints-1-8 { 10.96.0.10 . tcp . 80 . 0x00000000"),
                sent.get(0));
    }

    @Test
    void aServiceAdded() throws Exception {
        services.put(API, ServicePort.builder(API, 80).clusterIPs(List.of(ip("10.96.0.11"))).build());
        endpoints.put(API, List.of(ep("10.244.1.5", "node-a")));
        assertEquals("""
                add element ip nftproxy cluster-ips { 10.96.0.11 }
                add element ip nftproxy cluster-ip-ports { 10.96.0.11 . tcp . 80 comment "shop/api:http" }
                add element ip nftproxy service-ips { 10.96.0.11 . tcp . 80 comment "shop/api:http" }
                add element ip nftproxy service-endpoints-1-8 { 10.96.0.11 . tcp . 80 . 0x00000000 comment "shop/api:http" : 10.244.1.5 . 8080 }
                """, sync(API));
    }

    @Test
    void aServiceRemoved() throws Exception {
        services.remove(WEB);
        endpoints.remove(WEB);
        assertEquals("""
                delete element ip nftproxy cluster-ips { 10.96.0.10 }
                delete element ip nftproxy cluster-ip-ports { 10.96.0.10 . tcp . 80 }
                delete element ip nftproxy service-ips { 10.96.0.10 . tcp . 80 }
                delete element ip nftproxy ip-count-bit-0 { 10.96.0.10 . tcp . 80 }
                delete element ip nftproxy service-endpoints-1-8 { 10.96.0.10 . tcp . 80 . 0x00000000, 10.96.0.10 . tcp . 80 . 0x00000001 }
                delete element ip nftproxy service-nodeports { tcp . 30080 }
                delete element ip nftproxy nodeport-count-bit-0 { tcp . 30080 }
                delete element ip nftproxy nodeport-endpoints-1-8 { tcp . 30080 . 0x00000000, tcp . 30080 . 0x00000001 }
                delete element ip nftproxy nodeport-masquerade { tcp . 30080 }
                """, sync(WEB));
        assertEquals(Backend.NOTHING_DUE, syncer.dueNanos(), "nothing kept for later");
    }

    /**
     * Policy Local is data too: the NodePort moves from the plain ports' set to the Local one,
     * and with no endpoint here into the set that drops external traffic (it stays among the
     * frontends services sends on, which asks the Local set first); the ClusterIP does not
     * change. An endpoint arriving on this node moves elements again, never a rule.
     */
    @Test
    void externalTrafficPolicyFlippedToLocal() throws Exception {
        services.put(WEB, web(true));
        assertEquals("""
                delete element ip nftproxy nodeport-masquerade { tcp . 30080 }
                add element ip nftproxy local-nodeports { tcp . 30080 comment "shop/web:http" }
                add element ip nftproxy nodeport-no-local-endpoint { tcp . 30080 comment "shop/web:http" }
                """, sync(WEB));

        sent.clear();
        endpoints.put(WEB, List.of(ep("10.244.1.2", "node-b"), ep("10.244.1.3", "node-b"), ep("10.244.0.9", "node-a")));
        String here = sync(WEB);
        here.lines().forEach(l -> assertTrue(l.startsWith("add element ") || l.startsWith("delete element "), l));
        assertTrue(here.contains("delete element ip nftproxy nodeport-no-local-endpoint { tcp . 30080 }"), here);
        assertTrue(here.contains("add element ip nftproxy nodeport-local-endpoints-1-8 { tcp . 30080 . 0x00000000 comment"
                + " \"shop/web:http\" : 10.244.0.9 . 8080 }"), here);
    }

    /**
     * The hourly re-assertion: first what changed, exactly as a partial sync sends it; then every
     * element we hold again, in transactions that only add: no set is flushed, no rule re-sent
     * (rules are compared with the kernel's instead), so the kernel keeps its elements and their
     * counters, and holds its lock for each transaction only briefly.
     */
    @Test
    void aReassertionSendsTheChangeThenReAddsEveryElementAndNoRule() throws Exception {
        endpoints.put(WEB, List.of(ep("10.244.1.2", "node-b"), ep("10.244.1.4", "node-b")));
        TableContents before = kernel.readTable(Family.IP, "nftproxy");
        syncer.sync(new ProxyState(services, endpoints, node), null);
        String change = sent.get(0);
        assertTrue(change.contains("add element ip nftproxy service-endpoints-1-8 { 10.96.0.10 . tcp . 80 . 0x00000001"
                + " comment \"shop/web:http\" : 10.244.1.4 . 8080 }"), change);
        assertEquals(4, change.lines().count(), "the change as a partial sync sends it:\n" + change);
        List<String> resent = sent.subList(1, sent.size());
        assertTrue(resent.size() >= 2, "declarations, elements: " + resent.size());
        for (String tx : resent) {
            tx.lines().forEach(l -> assertTrue(l.startsWith("add table ") || l.startsWith("add set ") || l.startsWith("add map ")
                    || l.startsWith("add chain ") || l.startsWith("add element "), l));
        }
        assertTrue(String.join("", resent).contains(": 10.244.1.4 . 8080"), "the new endpoint is re-sent too");
        TableContents after = kernel.readTable(Family.IP, "nftproxy");
        assertEquals(before.elements().keySet(), after.elements().keySet());
        assertEquals(before.rules().size(), after.rules().size(), "the same rules, once each");
    }

    /** A re-assertion's change that brings chains (a bucket of counts) sends them first too, then its elements, then the rest. */
    @Test
    void aReassertionsChangeBringsItsStructureFirst() throws Exception {
        List<Endpoint> nine = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            nine.add(ep("10.244.1." + (2 + i), "node-b"));
        }
        endpoints.put(WEB, nine);
        syncer.sync(new ProxyState(services, endpoints, node), null);
        assertTrue(sent.get(0).contains("add chain ip nftproxy ip-pick-9-16"), sent.get(0));
        assertTrue(sent.get(0).lines().noneMatch(l -> l.startsWith("add element") || l.startsWith("delete element")), sent.get(0));
        assertTrue(sent.get(1).contains("add element ip nftproxy service-endpoints-9-16"), sent.get(1));
        assertTrue(sent.size() > 2, "then everything we hold again: " + sent.size());
    }

    @Test
    void aReassertionBringsBackAnElementSomeoneDeleted() throws Exception {
        SetElement clusterIp = kernel.listElements(Family.IP, "nftproxy", TableNames.CLUSTER_IPS).get(0);
        kernel.commit(new Transaction().delete(new Elements(Family.IP, "nftproxy", TableNames.CLUSTER_IPS, List.of(clusterIp))));
        SyncResult r = syncer.sync(new ProxyState(services, endpoints, node), null);
        assertFalse(r.elementsRecreated(), "repaired in place");
        assertTrue(kernel.listElements(Family.IP, "nftproxy", TableNames.CLUSTER_IPS).stream()
                .anyMatch(e -> e.key().equals(clusterIp.key())), "the element is back");
    }

    @Test
    void aChainSomeoneFlushedFailsTheReassertionAndTheRetryRebuilds() throws Exception {
        kernel.commit(new Transaction().flush(kernel.readTable(Family.IP, "nftproxy").chains().stream()
                .filter(c -> c.name().equals(TableNames.SERVICES)).findFirst().orElseThrow()));
        NftException e = assertThrows(NftException.class, () -> syncer.sync(new ProxyState(services, endpoints, node), null));
        assertTrue(e.getMessage().contains("chain services of table ip nftproxy differs from what we committed"), e.getMessage());
        assertTrue(syncer.needsFull(), "what we hold is forgotten");
        assertTrue(syncer.sync(new ProxyState(services, endpoints, node), null).elementsRecreated(), "rebuilt");
        assertEquals(Generation.SECOND, syncer.generation(), "rebuilt beside the table in use");
        TableContents t = kernel.readTable(Family.IP, "nftproxy");
        assertFalse(t.rulesOf(Generation.SECOND.chain(TableNames.SERVICES)).isEmpty(), "the chain's rules are back");
        assertTrue(t.chains().stream().noneMatch(c -> c.name().equals(TableNames.SERVICES)), "the old chain is gone");
    }

    @Test
    void anElementSomeoneChangedFailsTheReassertionAndTheRetryRebuilds() throws Exception {
        // Someone points one of our endpoint elements somewhere else.
        String map = "service-endpoints-1-8"; // web's two endpoints
        SetElement svc = kernel.listElements(Family.IP, "nftproxy", map).get(0);
        kernel.commit(new Transaction().delete(new Elements(Family.IP, "nftproxy", map, List.of(svc)))
                .add(new Elements(Family.IP, "nftproxy", map,
                        List.of(SetElement.of(svc.key(), Data.value(MapKeys.endpoint(ip("192.0.2.66"), 8080)))))));
        assertThrows(NftException.class, () -> syncer.sync(new ProxyState(services, endpoints, node), null));
        assertTrue(syncer.needsFull(), "what we hold is forgotten");
        SyncResult r = syncer.sync(new ProxyState(services, endpoints, node), null);
        assertTrue(r.elementsRecreated(), "rebuilt");
        assertTrue(kernel.listElements(Family.IP, "nftproxy", syncer.generation().set(map)).stream()
                .anyMatch(e -> e.key().equals(svc.key()) && e.data().equals(svc.data())), "the element as we had it");
    }

    /**
     * A pick tree (its maps, bit sets and chains) is declared while some frontend picks through
     * it: the first one of its kind brings it in a transaction before its elements (a packet
     * crossing the elements' commit finds the tree in both generations' rules), the last one
     * takes it away.
     */
    @Test
    void aTreeComesWithItsFirstFrontend() throws Exception {
        services.put(API, ServicePort.builder(API, 80).clusterIPs(List.of(ip("10.96.0.11")))
                .externalIPs(List.of(ip("203.0.113.11"))).externalPolicyLocal(true).build());
        endpoints.put(API, List.of(ep("10.244.0.5", "node-a")));
        List<String> first = syncInTwo(API);
        assertTrue(first.get(0).contains("add chain ip nftproxy ip-local-pick-1-128"), first.get(0));
        assertTrue(first.get(0).contains("add map ip nftproxy local-endpoints-1-8"), first.get(0));
        assertTrue(first.get(0).contains("add rule ip nftproxy ip-external-local goto ip-local-pick-1-128"), first.get(0));
        assertTrue(first.get(1).contains("add element ip nftproxy local-endpoints-1-8 {"), first.get(1));

        sent.clear();
        services.remove(API);
        endpoints.remove(API);
        String gone = sync(API);
        // An external IP keeps its endpoints for packets crossing the commit (the node's own
        // connections to it are checked before the DNAT only: Transitions), and so its tree.
        assertFalse(gone.contains("delete chain ip nftproxy ip-local-pick-1-128"), "kept while its last endpoints are: " + gone);
        String last = afterGrace();
        assertTrue(last.contains("delete chain ip nftproxy ip-local-pick-1-128"), last);
        assertTrue(last.indexOf("delete element ip nftproxy local-endpoints-1-8") < last.indexOf("delete map ip nftproxy local-endpoints-1-8"),
                "the elements before their map: " + last);
    }
    /**
     * Of a tree, the chains that lead to a bucket of counts ({@code 9-16}) and the bucket's map
     * are declared while some port's count is in it: the first port to enter it brings them in
     * a transaction before the one that moves its endpoints there, the last one out takes them away.
     */
    @Test
    void aBucketOfCountsComesWithItsFirstPort() throws Exception {
        List<Endpoint> nine = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            nine.add(ep("10.244.1." + (2 + i), "node-b"));
        }
        List<Endpoint> two = endpoints.get(WEB);
        endpoints.put(WEB, nine);
        List<String> both = syncInTwo(WEB);
        String in = both.get(1);
        assertTrue(both.get(0).contains("add chain ip nftproxy ip-pick-9-16"), both.get(0));
        assertTrue(both.get(0).contains("add chain ip nftproxy nodeport-pick-9-10"), both.get(0));
        assertTrue(both.get(0).contains("add map ip nftproxy service-endpoints-9-16"), both.get(0));
        assertTrue(in.contains("add element ip nftproxy service-endpoints-9-16"), in);
        assertFalse(in.contains("delete element ip nftproxy service-endpoints-1-8"), "kept in 1-8's map for a while: " + in);
        assertFalse(in.contains("ip-local-pick"), "the Local tree's buckets are as they were: " + in);
        assertEquals("""
                delete element ip nftproxy service-endpoints-1-8 { 10.96.0.10 . tcp . 80 . 0x00000000, 10.96.0.10 . tcp . 80 . 0x00000001 }
                delete element ip nftproxy nodeport-endpoints-1-8 { tcp . 30080 . 0x00000000, tcp . 30080 . 0x00000001 }
                """, afterGrace(), "moved out of 1-8's map once past its time");

        sent.clear();
        endpoints.put(WEB, two);
        sync(WEB);
        String out = afterGrace();
        assertTrue(out.contains("delete chain ip nftproxy ip-pick-9-16"), out);
        assertTrue(out.indexOf("delete element ip nftproxy service-endpoints-9-16") < out.indexOf("delete map ip nftproxy service-endpoints-9-16"),
                "the elements before their map: " + out);
        TableContents left = kernel.readTable(Family.IP, "nftproxy");
        assertTrue(left.chains().stream().noneMatch(c -> c.name().contains("-pick-9-")), "none of 9-16's chains is left");
        assertTrue(left.sets().stream().noneMatch(x -> x.name().endsWith("-9-16")), "nor its maps");
        assertTrue(left.chains().stream().anyMatch(c -> c.name().equals("ip-pick-1-8")));
    }
    /**
     * Past 1,024 endpoints a sticky port picks through chains of its own, which its element in
     * the verdict map {@code service-chains} leads into: the chains (and the map with its rule,
     * the first such port's) come in a transaction before that element, while the port's elements
     * in the shared trees stay; the second moves it.
     */
    @Test
    void chainsOfItsOwnComeBeforeTheElementThatLeadsIntoThem() throws Exception {
        services.put(WEB, ServicePort.builder(WEB, 80).clusterIPs(List.of(ip("10.96.0.10"))).nodePort(30080)
                .affinitySeconds(600).build());
        endpoints.put(WEB, moreThanTheRootsBlocks());
        List<String> both = syncInTwo(WEB);
        assertTrue(both.get(0).contains("add chain ip nftproxy svc-shop/web/tcp/80"), both.get(0));
        assertTrue(both.get(0).contains("add map ip nftproxy service-chains"), both.get(0));
        assertTrue(both.get(1).contains("add element ip nftproxy service-chains { 10.96.0.10 . tcp . 80"), both.get(1));
        assertFalse(both.get(1).contains("add chain"), both.get(1));
    }

    /**
     * A plain port past 1,024 endpoints is sent to its block's tree by its element in {@code
     * service-chains}: the block's tree and map (and the verdict map with its rule) come in a
     * transaction before that element; an endpoint more within the block is then elements without
     * a verdict, and one that takes the count into the next block changes the verdict element
     * after that block's tree.
     */
    @Test
    void aBlockPastTheRootsComesBeforeTheVerdictThatLeadsIntoIt() throws Exception {
        List<Endpoint> many = moreThanTheRootsBlocks(); // 1,100: block 8
        endpoints.put(WEB, many);
        List<String> both = syncInTwo(WEB);
        assertTrue(both.get(0).contains("add chain ip nftproxy ip-pick-1025-1152"), both.get(0));
        assertTrue(both.get(0).contains("add map ip nftproxy service-endpoints-1025-1152"), both.get(0));
        assertTrue(both.get(0).contains("add map ip nftproxy service-chains"), both.get(0));
        assertFalse(both.get(0).contains("add element ip nftproxy service-chains"), both.get(0));
        assertTrue(both.get(1).contains("add element ip nftproxy service-chains { 10.96.0.10 . tcp . 80 comment \"shop/web:http\""
                + " : goto ip-pick-1025-1152 }"), both.get(1));
        assertTrue(both.get(1).contains("add element ip nftproxy nodeport-chains { tcp . 30080 comment \"shop/web:http\""
                + " : goto nodeport-pick-1025-1152 }"), both.get(1));
        assertFalse(both.get(1).contains("add chain"), both.get(1));

        List<Endpoint> more = new ArrayList<>(many);
        more.add(ep("10.246.0.2", "node-b"));
        endpoints.put(WEB, more);
        sent.clear();
        String one = sync(WEB);
        assertFalse(one.contains("chain") || one.contains(": goto") || one.contains(": jump"), "elements, no verdict: " + one);
        assertTrue(one.contains("add element ip nftproxy service-endpoints-1025-1152 { 10.96.0.10 . tcp . 80 . 0x0000044c"
                + " comment \"shop/web:http\" : 10.246.0.2 . 8080"), one); // index 1,100

        List<Endpoint> block9 = new ArrayList<>(more);
        for (int i = 0; i < 60; i++) {
            block9.add(ep("10.246.1." + (2 + i), "node-b")); // 1,161: block 9
        }
        endpoints.put(WEB, block9);
        sent.clear();
        List<String> next = syncInTwo(WEB);
        assertTrue(next.get(0).contains("add chain ip nftproxy ip-pick-1153-1280"), next.get(0));
        assertTrue(next.get(1).contains("goto ip-pick-1153-1280"), next.get(1));
    }

    /**
     * A block that comes in the sync that takes another away (the globals do not only grow): what
     * is new is committed first, beside all that was, and what goes goes with the elements, so
     * that the verdict element leading into the new block's tree finds it in both generations.
     */
    @Test
    void aBlockThatComesAsAnotherGoesIsCommittedFirstBesideIt() throws Exception {
        endpoints.put(WEB, moreThanTheRootsBlocks()); // block 8
        syncInTwo(WEB);
        afterGrace();
        List<Endpoint> block10 = new ArrayList<>(moreThanTheRootsBlocks());
        for (int i = 0; i < 200; i++) {
            block10.add(ep("10.246." + (i / 200) + "." + (2 + i % 200), "node-b")); // 1,300
        }
        endpoints.put(WEB, block10);
        sent.clear();
        syncInTwo(WEB); // block 10's tree first; block 8's kept for connections crossing the change
        List<Endpoint> block11 = new ArrayList<>(block10);
        for (int i = 0; i < 150; i++) {
            block11.add(ep("10.247." + (i / 200) + "." + (2 + i % 200), "node-b")); // 1,450: block 11, which nothing holds
        }
        endpoints.put(WEB, block11);
        now += Transitions.GRACE.toNanos(); // and this sync takes block 8 away with its kept elements
        sent.clear();
        List<String> both = syncInTwo(WEB);
        assertTrue(both.get(0).contains("add chain ip nftproxy ip-pick-1409-1536"), both.get(0));
        assertFalse(both.get(0).contains("delete"), "nothing goes before the elements: " + both.get(0));
        assertTrue(both.get(1).contains("goto ip-pick-1409-1536"), both.get(1));
        assertTrue(both.get(1).contains("delete chain ip nftproxy ip-pick-1025-1152"), "block 8 goes with the elements");
    }

    /** 1,100 endpoints: more than the trees' roots send on (1,024), in block 8. */
    private static List<Endpoint> moreThanTheRootsBlocks() {
        List<Endpoint> many = new ArrayList<>();
        for (int i = 0; i < 1_100; i++) {
            many.add(ep("10.245." + (i / 200) + "." + (2 + i % 200), "node-b"));
        }
        return many;
    }

    /**
     * A node without IPv6 holds no ip6 table ({@link io.nftproxy.proxy.plan.TableFamilies}): the
     * first dual-stack port brings it, written whole in that sync, and the last one takes it away.
     */
    @Test
    void aFamilysTableComesWithItsFirstPortAndGoesWithTheLast() throws Exception {
        assertFalse(kernel.hasTable(Family.IP6, "nftproxy"), "no ip6 table on a node without IPv6");
        services.put(API, ServicePort.builder(API, 80).clusterIPs(List.of(ip("10.96.0.11"), ip("fd00:96::11"))).build());
        endpoints.put(API, List.of(ep("10.244.1.5", "node-b"), ep("fd00:244::5", "node-b")));
        String in = sync(API);
        assertTrue(in.contains("add table ip6 nftproxy"), in);
        assertTrue(in.contains("add chain ip6 nftproxy nat-prerouting"), in);
        assertEquals(1, kernel.listElements(Family.IP6, "nftproxy", TableNames.SERVICE_IPS).size(), "the port's IPv6 ClusterIP");
        assertEquals(3, kernel.listElements(Family.IP, "nftproxy", TableNames.SERVICE_IPS).size(), "IPv4's two, and the port's");

        sent.clear();
        services.remove(API);
        endpoints.remove(API);
        String out = sync(API);
        assertTrue(out.contains("delete table ip6 nftproxy"), out);
        assertFalse(out.contains("add "), "nothing added: " + out);
        assertFalse(kernel.hasTable(Family.IP6, "nftproxy"));
        assertEquals(2, kernel.listElements(Family.IP, "nftproxy", TableNames.SERVICE_IPS).size());
    }
}
