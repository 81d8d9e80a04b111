package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.render.TableNames;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftKernel;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.TransactionException;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;

/** Services whose objects the kernel would refuse never stop the others being programmed. */
class BadServicesTest {
    static ServicePort svc(ServicePortName id, String ip, int nodePort, int affinity) {
        return ServicePort.builder(id, 80).clusterIPs(List.of(PartialSyncPropertyTest.ip(ip))).nodePort(nodePort)
                .affinitySeconds(affinity).build();
    }

    @Test
    void overLongNamesFitAndAnUnexpressibleServiceIsLeftOut() throws Exception {
        ServicePortName longName = new ServicePortName("n".repeat(250), "s".repeat(250), "http", Protocol.TCP);
        ServicePortName badPort = new ServicePortName("ns", "bad", "http", Protocol.TCP);
        ServicePortName fine = new ServicePortName("ns", "fine", "http", Protocol.TCP);
        TreeMap<ServicePortName, ServicePort> services = new TreeMap<>();
        services.put(longName, svc(longName, "10.96.0.1", 0, 600));
        services.put(badPort, svc(badPort, "10.96.0.2", 70000, 0)); // a NodePort no 16-bit field holds
        services.put(fine, svc(fine, "10.96.0.3", 0, 0));
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>();
        for (ServicePortName id : services.keySet()) {
            eps.put(id, List.of(Endpoint.ready(PartialSyncPropertyTest.ip("10.244.0." + (eps.size() + 1)), 8080, "node-a")));
        }
        ProxyState state = new ProxyState(services, eps, NodeInfo.named("node-a"));
        FakeNfTables fake = new FakeNfTables();
        Syncer syncer = new Syncer(fake, new NftRenderer(PartialSyncPropertyTest.CFG), "nftproxy");
        SyncResult r = syncer.sync(state, null);
        assertEquals(1, r.rejectedServices().size(), r.rejectedServices().toString());
        assertTrue(r.rejectedServices().get(0).startsWith("ns/bad"), r.rejectedServices().toString());
        TableContents t = fake.readTable(Family.IP, "nftproxy");
        String printed = t.toString();
        assertTrue(printed.contains("10.96.0.3 . tcp . 80"), "the fine service is programmed");
        assertTrue(printed.contains("10.96.0.1 . tcp . 80"), "the long-named one too");
        assertTrue(!printed.contains("10.96.0.2 "), "the bad one is not");
        for (Chain c : t.chains()) {
            assertTrue(c.name().getBytes(StandardCharsets.UTF_8).length <= 255, c.name());
        }
        for (NftSet s : t.sets()) {
            assertTrue(s.name().getBytes(StandardCharsets.UTF_8).length <= 255, s.name());
        }
        // A later partial sync of another service still works; the bad one stays out until it changes.
        ServicePortName other = new ServicePortName("ns", "other", "http", Protocol.TCP);
        services.put(other, svc(other, "10.96.0.4", 0, 0));
        SyncResult r2 = syncer.sync(new ProxyState(services, eps, NodeInfo.named("node-a")), Set.of(other));
        assertEquals(List.of(), r2.rejectedServices());
        assertTrue(fake.readTable(Family.IP, "nftproxy").toString().contains("10.96.0.4 . tcp . 80"));
    }

    /** The fake, refusing (EINVAL, as the kernel refuses a rule it cannot take) any rule in a chain whose name has {@code marker}. */
    private static final class Refusing implements NftKernel {
        final FakeNfTables fake = new FakeNfTables();
        final String marker;
        int refusals;

        Refusing(String marker) {
            this.marker = marker;
        }

        @Override
        public CommitStats commit(Transaction tx) throws NftException {
            for (int i = 0; i < tx.ops().size(); i++) {
                Op op = tx.ops().get(i);
                if (op.object() instanceof Rule r && r.chain().contains(marker)) {
                    refusals++;
                    throw new TransactionException(List.of(new TransactionException.Failure(i, op, 22, "refused by the test")),
                            tx.ops().size());
                }
            }
            return fake.commit(tx);
        }

        @Override
        public TableContents readTable(Family family, String table) throws NftException {
            return fake.readTable(family, table);
        }

        @Override
        public List<SetElement> listElements(Family family, String table, String set) throws NftException {
            return fake.listElements(family, table, set);
        }

        @Override
        public boolean hasTable(Family family, String table) throws NftException {
            return fake.hasTable(family, table);
        }

        @Override
        public long generation() throws NftException {
            return fake.generation();
        }
    }

    @Test
    void aServiceTheKernelRefusesIsLeftOutUntilItChanges() throws Exception {
        ServicePortName refused = new ServicePortName("ns", "refused", "http", Protocol.TCP);
        ServicePortName fine = new ServicePortName("ns", "fine", "http", Protocol.TCP);
        TreeMap<ServicePortName, ServicePort> services = new TreeMap<>();
        // More endpoints than the shared trees pick among: chains of its own, whose rules the
        // kernel refuses.
        services.put(refused, svc(refused, "10.96.0.2", 30002, 600));
        services.put(fine, svc(fine, "10.96.0.3", 0, 0));
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>();
        List<Endpoint> many = moreThanTheSharedTreesPickAmong();
        eps.put(refused, many);
        eps.put(fine, List.of(Endpoint.ready(PartialSyncPropertyTest.ip("10.244.0.3"), 8080, "node-a")));
        Refusing kernel = new Refusing("ns/refused");
        Syncer syncer = new Syncer(kernel, new NftRenderer(PartialSyncPropertyTest.CFG), "nftproxy");

        SyncResult r = syncer.sync(new ProxyState(services, eps, NodeInfo.named("node-a")), null);
        assertEquals(1, r.rejectedServices().size(), r.rejectedServices().toString());
        assertTrue(r.rejectedServices().get(0).startsWith("ns/refused:http/tcp: "), r.rejectedServices().toString());
        assertTrue(r.rejectedServices().get(0).contains("refused by the test"), "the kernel's reason is kept");
        String table = kernel.fake.readTable(Family.IP, "nftproxy").toString();
        assertTrue(table.contains("10.96.0.3 . tcp . 80"), "the rest of the sync went in");
        assertTrue(!table.contains("10.96.0.2 "), "the refused service is not half there");
        int refusals = kernel.refusals;

        // A full sync with it unchanged does not try it again.
        assertEquals(List.of(), syncer.sync(new ProxyState(services, eps, NodeInfo.named("node-a")), null).rejectedServices());
        assertEquals(refusals, kernel.refusals);

        // Changed (down to one endpoint), it is tried again and, being plain data, goes in.
        eps.put(refused, many.subList(0, 1));
        SyncResult again = syncer.sync(new ProxyState(services, eps, NodeInfo.named("node-a")), Set.of(refused));
        assertEquals(List.of(), again.rejectedServices());
        assertTrue(kernel.fake.readTable(Family.IP, "nftproxy").toString().contains("10.96.0.2 . tcp . 80"));
    }

    /**
     * A first sync's transactions count each service's elements into what the syncer holds as
     * they are computed. One the kernel refuses must leave no count behind: a service of a later
     * transaction sharing an element with it (a ClusterIP both use, on other ports: its element
     * in cluster-ips) must still send that element, and take it out when it goes. A service
     * before both has the set's table held already, so that nothing but the counts can get this
     * right.
     */
    @Test
    void aServiceRefusedInAFirstSyncTransactionLeavesNoCountBehind() throws Exception {
        ServicePortName before = new ServicePortName("ns", "before", "http", Protocol.TCP);
        ServicePortName refused = new ServicePortName("ns", "refused", "http", Protocol.TCP);
        ServicePortName fine = new ServicePortName("ns", "fine", "http", Protocol.TCP);
        TreeMap<ServicePortName, ServicePort> services = new TreeMap<>();
        services.put(before, svc(before, "10.96.0.1", 0, 600)); // sticky: chains of its own past 1,024
        services.put(refused, svc(refused, "10.96.0.2", 0, 600));
        services.put(fine, ServicePort.builder(fine, 81).clusterIPs(List.of(PartialSyncPropertyTest.ip("10.96.0.2"))).build());
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>();
        List<Endpoint> others = new ArrayList<>();
        for (Endpoint e : moreThanTheSharedTreesPickAmong()) {
            others.add(Endpoint.ready(PartialSyncPropertyTest.ip(Inet.format(e.address()).replace("10.244.", "10.245.")), 8080,
                    "node-a"));
        }
        eps.put(before, others); // owns chains, as the refused one: in a transaction before it
        List<Endpoint> many = moreThanTheSharedTreesPickAmong(); // sent in a transaction before the fine one's
        eps.put(refused, many);
        eps.put(fine, List.of(many.get(0)));
        Refusing kernel = new Refusing("ns/refused");
        Syncer syncer = new Syncer(kernel, new NftRenderer(PartialSyncPropertyTest.CFG), "nftproxy");
        syncer.firstSyncBatch(64); // the globals, then one transaction per service

        SyncResult r = syncer.sync(new ProxyState(services, eps, NodeInfo.named("node-a")), null);
        assertEquals(1, r.rejectedServices().size(), r.rejectedServices().toString());
        assertTrue(kernel.refusals > 0);
        String shared = "key=0x0a600002,"; // 10.96.0.2
        assertEquals(2, clusterIps(kernel).size(), clusterIps(kernel).toString());
        assertTrue(clusterIps(kernel).stream().anyMatch(e -> e.contains(shared)),
                "the shared element went in with the service kept: " + clusterIps(kernel));

        // The service kept goes: nothing holds the shared element any more, so it goes too.
        services.remove(fine);
        eps.remove(fine);
        syncer.sync(new ProxyState(services, eps, NodeInfo.named("node-a")), Set.of(fine));
        assertEquals(1, clusterIps(kernel).size(), clusterIps(kernel).toString());
        assertTrue(clusterIps(kernel).stream().noneMatch(e -> e.contains(shared)), clusterIps(kernel).toString());
    }

    /** Endpoints enough for chains of a service's own: 10.244.1.2, 10.244.1.3, ... */
    private static List<Endpoint> moreThanTheSharedTreesPickAmong() {
        List<Endpoint> many = new ArrayList<>();
        for (int i = 0; i <= NftRenderer.MAX_PLAIN_PICK; i++) {
            many.add(Endpoint.ready(PartialSyncPropertyTest.ip("10.244." + (1 + i / 200) + "." + (2 + i % 200)), 8080, "node-a"));
        }
        return many;
    }

    private static List<String> clusterIps(Refusing kernel) throws NftException {
        List<String> out = new ArrayList<>();
        for (SetElement e : kernel.fake.listElements(Family.IP, "nftproxy", TableNames.CLUSTER_IPS)) {
            out.add(e.toString());
        }
        return out;
    }

    /**
     * Endpoints whose reading fails: a fault injected inside one service's rendering (the
     * renderer reads a service's endpoints first), standing for any defect the renderer may have.
     */
    static final class Poisoned extends AbstractList<Endpoint> {
        final RuntimeException fault;

        Poisoned(RuntimeException fault) {
            this.fault = fault;
        }

        @Override
        public Endpoint get(int index) {
            throw fault;
        }

        @Override
        public int size() {
            throw fault;
        }

        // Compared by identity: only the renderer's reading is poisoned.
        @Override
        public boolean equals(Object o) {
            return o == this;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }
    }

    @Test
    void anyFailureInsideOneServicesRenderingLeavesOnlyThatServiceOut() throws Exception {
        ServicePortName broken = new ServicePortName("ns", "broken", "http", Protocol.TCP);
        ServicePortName npe = new ServicePortName("ns", "npe", "http", Protocol.TCP);
        ServicePortName fine = new ServicePortName("ns", "fine", "http", Protocol.TCP);
        TreeMap<ServicePortName, ServicePort> services = new TreeMap<>();
        services.put(broken, svc(broken, "10.96.0.2", 0, 0));
        services.put(npe, svc(npe, "10.96.0.4", 30004, 600));
        services.put(fine, svc(fine, "10.96.0.3", 0, 0));
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>();
        eps.put(broken, new Poisoned(new ArithmeticException("injected")));
        eps.put(npe, new Poisoned(new NullPointerException()));
        eps.put(fine, List.of(Endpoint.ready(PartialSyncPropertyTest.ip("10.244.0.3"), 8080, "node-a")));
        FakeNfTables fake = new FakeNfTables();
        Syncer syncer = new Syncer(fake, new NftRenderer(PartialSyncPropertyTest.CFG), "nftproxy");

        SyncResult r = syncer.sync(new ProxyState(services, eps, NodeInfo.named("node-a")), null);
        assertEquals(2, r.rejectedServices().size(), r.rejectedServices().toString());
        assertTrue(r.rejectedServices().get(0).startsWith("ns/broken:http/tcp: internal error"), r.rejectedServices().toString());
        assertTrue(r.rejectedServices().get(0).contains("ArithmeticException: injected"), r.rejectedServices().toString());
        assertTrue(r.rejectedServices().get(1).startsWith("ns/npe:http/tcp: internal error"), r.rejectedServices().toString());
        assertTrue(r.rejectedServices().get(1).contains("NullPointerException at "), r.rejectedServices().toString());
        String table = fake.readTable(Family.IP, "nftproxy").toString();
        assertTrue(table.contains("10.96.0.3 . tcp . 80"), "the rest of the sync went in");
        assertTrue(!table.contains("10.96.0.2 ") && !table.contains("10.96.0.4 "), "the failing services are not half there");

        // Its endpoints mended: a partial sync brings it in.
        eps.put(broken, List.of(Endpoint.ready(PartialSyncPropertyTest.ip("10.244.0.2"), 8080, "node-a")));
        SyncResult again = syncer.sync(new ProxyState(services, eps, NodeInfo.named("node-a")), Set.of(broken));
        assertEquals(List.of(), again.rejectedServices());
        assertTrue(fake.readTable(Family.IP, "nftproxy").toString().contains("10.96.0.2 . tcp . 80"));
    }
}
