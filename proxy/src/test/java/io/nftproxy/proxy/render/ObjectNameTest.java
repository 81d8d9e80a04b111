package io.nftproxy.proxy.render;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.LbAlgorithm;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.plan.PortShapes;
import io.nftproxy.proxy.plan.StickyTimeout;

/**
 * Every name the renderer produces, read back by {@link ObjectName#parse} to the value that
 * formats it; and the predicates a sync asks of millions of names, which keep their own
 * allocation-free lookups, saying of each what the parse says.
 */
class ObjectNameTest {
    /** Every name of every object (chain, set, element's set, verdict target) of a wide mix of ports and their globals. */
    private static final SortedSet<String> PRODUCED = new TreeSet<>();

    @BeforeAll
    static void renderAWideMix() {
        NftRenderer r = new NftRenderer(NftRendererTest.CFG.withEndpointCounters(true));
        SortedSet<String> demanded = new TreeSet<>();
        SortedSet<StickyTimeout> timeouts = new TreeSet<>();
        int n = 0;
        for (String shape : List.of("-", "nodeport", "lb nodeport etp-local", "nodeport affinity=100",
                "lb nodeport etp-local affinity=200", "lb nodeport ranges=10.0.0.0/8", "nodeport itp-local v6")) {
            for (LbAlgorithm algorithm : LbAlgorithm.values()) {
                for (int k : List.of(0, 1, 3, 9, 17, 33, 65, 129, 300, 1025, 2000)) {
                    n++;
                    ServicePort p = PortShapes.port(new ServicePortName("ns", "s" + n, "p", Protocol.TCP), n % 250 + 1, shape)
                            .algorithm(algorithm).build();
                    List<Endpoint> eps = new ArrayList<>();
                    for (Endpoint e : NftRendererTest.manyEps(k)) {
                        eps.add(eps.size() % 2 == 0 ? Endpoint.ready(e.address(), 8080, "node-a") : e); // half of them this node's
                    }
                    Fragment f = r.service(IpFamily.V4, p, eps, NftRendererTest.NODE);
                    collect(f);
                    demanded.addAll(f.demands());
                    timeouts.addAll(StickyTimeout.usedBy(p));
                }
            }
        }
        collect(r.globals(IpFamily.V4, new ProxyState(Map.of(), Map.of(), NftRendererTest.NODE), timeouts, demanded));
        // What the counters read whether or not a port fills it.
        PRODUCED.addAll(PickTree.allEndpointMaps());
        PRODUCED.addAll(PickTree.bigBlockMaps());
        PRODUCED.addAll(MaglevPick.allSlotsMaps());
        PRODUCED.add(Names.traceChain("output", "t1"));
    }

    private static void collect(Fragment f) {
        PRODUCED.addAll(f.chains().keySet());
        PRODUCED.addAll(f.sets().keySet());
        PRODUCED.addAll(f.elements().keySet());
        for (List<SetElement> els : f.elements().values()) {
            for (SetElement e : els) {
                if (e.data() instanceof Verdict v && v.chain() != null) {
                    PRODUCED.add(v.chain());
                }
            }
        }
    }

    @Test
    void everyNameReadsBackToTheValueThatFormatsIt() {
        List<String> unread = new ArrayList<>();
        for (String name : PRODUCED) {
            ObjectName read = ObjectName.parse(name);
            if (read == null) {
                unread.add(name);
                continue;
            }
            assertEquals(name, read.text(), "read back and formatted again");
            assertEquals(read, ObjectName.parse(read.text()));
        }
        assertEquals(List.of(), unread, "names none of ObjectName's schemes reads");
    }

    @Test
    void theMixProducesEveryScheme() {
        Set<ObjectName.Scheme> seen = EnumSet.noneOf(ObjectName.Scheme.class);
        PRODUCED.stream().map(ObjectName::parse).filter(x -> x != null).forEach(x -> seen.add(x.scheme()));
        assertEquals(EnumSet.allOf(ObjectName.Scheme.class), seen, "a scheme no name in the mix is of is a scheme this test does not hold");
        assertTrue(PRODUCED.size() > 5_000, "the mix: " + PRODUCED.size() + " names");
    }

    /** The sync's hot predicates (lookups that allocate nothing) against the parse, over every name. */
    @Test
    void thePredicatesOfASyncSayWhatTheParseSays() {
        for (String name : PRODUCED) {
            ObjectName read = ObjectName.parse(name);
            ObjectName.Scheme s = read.scheme();
            assertEquals(read.onDemand(), NftRenderer.isOnDemandSet(name), "on demand: " + name);
            assertEquals(s == ObjectName.Scheme.ENDPOINTS ? read.tree() : null, PickTree.treeOfMap(name), "tree of map: " + name);
            assertEquals(s == ObjectName.Scheme.ENDPOINTS || s == ObjectName.Scheme.STICKY_ENDPOINTS
                    ? read.tree().endpointsBase() : null, TableNames.endpointMapBase(name), "endpoint map base: " + name);
            assertEquals(s == ObjectName.Scheme.TRACE_CHAIN, Names.isTraceChain(name), "trace chain: " + name);
            assertEquals(s == ObjectName.Scheme.HASHED_SLOTS, MaglevPick.isSlotsMap(name), "slots map: " + name);
            for (PickTree.Kind kind : List.of(PickTree.Kind.IP, PickTree.Kind.NODEPORT)) {
                boolean bigRoot = s == ObjectName.Scheme.PICK && read.tree() == kind && (read.lo() - 1) % NftRenderer.MAX_SHARED_PICK == 0
                        && read.hi() == read.lo() + NftRenderer.MAX_SHARED_PICK - 1 && read.lo() > NftRenderer.MAX_PLAIN_PICK;
                assertEquals(bigRoot ? (read.lo() - 1) / NftRenderer.MAX_SHARED_PICK : -1, PickTree.bigBlockOfRoot(kind, name),
                        "root of a block past the plain picks: " + name);
            }
        }
    }

    @ParameterizedTest
    @CsvSource(textBlock = """
            ip-local-pick-3-4,                PICK,            IP_LOCAL, 3,  4
            nodeport-count-bit-6,             COUNT_BIT,       NODEPORT, -1, -1
            local-endpoints-9-16,             ENDPOINTS,       IP_LOCAL, 9,  16
            nodeport-local-endpoints-1-8,     ENDPOINTS,       NODEPORT_LOCAL, 1, 8
            sticky-local-nodeports-ids-1-8,   STICKY_RANGE_MEMBERS, NODEPORT_LOCAL, 1, 8
            ip-sticky-129-256-slot-200,       STICKY_SLOT,     IP,       129, 256
            sticky-ips,                       STICKY_MEMBERS_ALL, IP,    -1, -1
            """)
    void aNameReadsAsItsParts(String name, ObjectName.Scheme scheme, PickTree.Kind tree, int lo, int hi) {
        ObjectName read = ObjectName.parse(name);
        assertNotNull(read, name);
        assertEquals(scheme, read.scheme());
        assertEquals(tree, read.tree());
        assertEquals(lo, read.lo());
        assertEquals(hi, read.hi());
    }

    @Test
    void theTextAChainCarries() {
        assertEquals("ns/web/tcp/80", ObjectName.parse("svc-ns/web/tcp/80").rest());
        assertEquals(300, ObjectName.parse("sticky-nodeports-300").n());
        assertEquals(LbAlgorithm.SOURCE_HASH, ObjectName.parse("nodeport-source-hash-809").algorithm());
        assertEquals("output", Names.traceHook(Names.traceChain("output", "7")));
        assertNull(Names.traceHook("services"));
    }

    /** Not ours, or not as we write it: a number with a leading zero, a hashed pick of this node's endpoints, a random one. */
    @ParameterizedTest
    @ValueSource(strings = {"ip-pick-01-8", "ip-local-maglev-slots-809", "ip-random-slots-809", "service-endpoints-x-y", "KUBE-SERVICES",
            "ip-count-bit-", "service-endpoints", "firewall-allow-"})
    void otherNamesAreNone(String name) {
        assertNull(ObjectName.parse(name), name);
    }
}
