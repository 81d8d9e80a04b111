package io.nftproxy.proxy.render;

import static io.nftproxy.proxy.render.NftRendererTest.CFG;
import static io.nftproxy.proxy.render.NftRendererTest.NODE;
import static io.nftproxy.proxy.render.NftRendererTest.manyEps;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.print.NftPrinter;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.LbAlgorithm;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.plan.PortShapes;

/** The hashed picks as the renderer lays them out: which frontends hash, into which map and chain, with which rule. */
class MaglevPickTest {
    static final NftRenderer R = new NftRenderer(CFG);

    /** A port of shape {@code shape} (plan.PortShapes) at 10.96.0.50:80/TCP. */
    static ServicePort port(String shape, LbAlgorithm a) {
        return PortShapes.port(new ServicePortName("default", "web", "http", Protocol.TCP), 50, shape).algorithm(a).build();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        // description; shape; algorithm; endpoints; the maps the port's elements are in (sorted), the verdicts
        "maglev ClusterIP, 3 endpoints; -; MAGLEV; 3; ip-maglev-slots-809; goto ip-maglev-809",
        "source-hash ClusterIP; -; SOURCE_HASH; 3; ip-source-hash-slots-809; goto ip-source-hash-809",
        "maglev, 9 endpoints: the next size; -; MAGLEV; 9; ip-maglev-slots-1601; goto ip-maglev-1601",
        "maglev NodePort and load balancer; nodeport lb; MAGLEV; 10; ip-maglev-slots-1601 nodeport-maglev-slots-1601; goto ip-maglev-1601 goto ip-maglev-1601 goto nodeport-maglev-1601",
        "random: the trees; -; RANDOM; 3; service-endpoints-1-8; -",
        "policy Local: the trees (no endpoint here: none of the local ones); nodeport etp-local; MAGLEV; 3; nodeport-endpoints-1-8 service-endpoints-1-8; -",
        "past 1,024 endpoints: at random; -; RANDOM; 1025; service-endpoints-1025-1152; goto ip-pick-1025-1152",
        "maglev past 1,024 endpoints: at random; -; MAGLEV; 1025; service-endpoints-1025-1152; goto ip-pick-1025-1152",
    })
    void whereAFrontendPicks(String description, String shape, LbAlgorithm a, int count, String maps, String verdicts) {
        Fragment f = R.service(IpFamily.V4, port(shape, a), manyEps(count), NODE);
        Set<String> pickMaps = new java.util.TreeSet<>();
        for (String set : f.elements().keySet()) {
            if (MaglevPick.isSlotsMap(set) || TableNames.endpointMapBase(set) != null) {
                pickMaps.add(set);
            }
        }
        assertEquals(maps, String.join(" ", pickMaps), description);
        List<String> sentOn = new java.util.ArrayList<>();
        for (String vmap : List.of(TableNames.SERVICE_CHAINS, TableNames.NODEPORT_CHAINS)) {
            f.elements().getOrDefault(vmap, List.of()).forEach(e -> sentOn.add(e.data().toString()));
        }
        assertEquals(verdicts.equals("-") ? "" : verdicts, String.join(" ", sentOn), description);
    }

    @Test
    void everySlotOfTheTableIsAnElementAndTheEndpointsShareThemEvenly() {
        Fragment f = R.service(IpFamily.V4, port("-", LbAlgorithm.MAGLEV), manyEps(3), NODE);
        List<SetElement> slots = f.elements().get("ip-maglev-slots-809");
        assertEquals(809, slots.size());
        Map<Bytes, Integer> perEndpoint = new HashMap<>();
        Set<Bytes> keys = new HashSet<>();
        for (SetElement e : slots) {
            keys.add(e.key());
            perEndpoint.merge(((Data.Value) e.data()).bytes(), 1, Integer::sum);
        }
        assertEquals(809, keys.size(), "one element a slot");
        assertEquals(3, perEndpoint.size());
        perEndpoint.values().forEach(n -> assertTrue(n == 269 || n == 270, "809 slots of 3 endpoints: " + perEndpoint.values()));
        assertTrue(f.demands().contains("ip-maglev-slots-809") && f.demands().contains(TableNames.SERVICE_CHAINS), f.demands().toString());
    }

    @Test
    void theGlobalsDeclareTheMapAndTheChainThatHashesTheClient() {
        ServicePort maglev = port("nodeport", LbAlgorithm.MAGLEV);
        ServicePort sourceHash = port("-", LbAlgorithm.SOURCE_HASH).toBuilder()
                .clusterIPs(List.of(Inet.parse("10.96.0.51"))).build();
        sourceHash = ServicePort.builder(new ServicePortName("default", "sh", "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.51"))).algorithm(LbAlgorithm.SOURCE_HASH).build();
        ProxyState st = new ProxyState(Map.of(maglev.id(), maglev, sourceHash.id(), sourceHash),
                Map.of(maglev.id(), manyEps(3), sourceHash.id(), manyEps(20)), NODE);
        Fragment g = R.globals(IpFamily.V4, st);
        assertTrue(g.sets().containsKey("ip-maglev-slots-809") && g.sets().containsKey("nodeport-maglev-slots-809")
                && g.sets().containsKey("ip-source-hash-slots-3203"), g.sets().keySet().toString());
        assertEquals("ip daddr . meta l4proto . th dport . jhash ip saddr . th sport mod 809 seed 0x6e667470 map @ip-maglev-slots-809",
                body(g, "ip-maglev-809", 0).replaceFirst("^dnat ip to ", ""));
        assertEquals("meta l4proto . th dport . jhash ip saddr . th sport mod 809 seed 0x6e667470 map @nodeport-maglev-slots-809",
                body(g, "nodeport-maglev-809", 0).replaceFirst("^dnat ip to ", ""));
        assertEquals("ip daddr . meta l4proto . th dport . jhash ip saddr mod 3203 seed 0x6e667470 map @ip-source-hash-slots-3203",
                body(g, "ip-source-hash-3203", 0).replaceFirst("^dnat ip to ", ""));
        assertFalse(g.chains().containsKey("ip-maglev-1601"), "no chain for a size no frontend has");
        assertTrue(g.declares().containsAll(List.of("ip-maglev-slots-809", "nodeport-maglev-slots-809", "ip-source-hash-slots-3203")));

        // ClientIP affinity: the chain asks the check of remembered clients first, as the trees' roots do.
        ServicePort sticky = port("-", LbAlgorithm.MAGLEV).toBuilder().affinitySeconds(60).build();
        Fragment gs = R.globals(IpFamily.V4, new ProxyState(Map.of(sticky.id(), sticky), Map.of(sticky.id(), manyEps(3)), NODE));
        assertEquals(2, gs.chains().get("ip-maglev-809").rules().size());
        assertTrue(body(gs, "ip-maglev-809", 0).endsWith("jump ip-sticky-check"), body(gs, "ip-maglev-809", 0));
        Fragment fs = R.service(IpFamily.V4, sticky, manyEps(3), NODE);
        assertEquals(3, fs.elements().get("ip-sticky-endpoints-1-8").size(), "remembered by number, as the trees' clients");
    }

    private static String body(Fragment g, String chain, int rule) {
        return NftPrinter.ruleBody(g.chains().get(chain).rules().get(rule), g.sets()::get);
    }

    @Test
    void oneEndpointOfTenLeavingRewritesItsSlotsAndFewOthers() {
        List<Endpoint> ten = manyEps(10);
        Fragment before = R.service(IpFamily.V4, port("-", LbAlgorithm.MAGLEV), ten, NODE);
        Fragment after = R.service(IpFamily.V4, port("-", LbAlgorithm.MAGLEV), ten.subList(1, 10), NODE, before);
        Map<Bytes, Data> was = new HashMap<>();
        before.elements().get("ip-maglev-slots-1601").forEach(e -> was.put(e.key(), e.data()));
        int changed = 0;
        for (SetElement e : after.elements().get("ip-maglev-slots-1601")) {
            changed += e.data().equals(was.get(e.key())) ? 0 : 1;
        }
        double moved = changed / 1601.0;
        assertTrue(moved >= 0.09 && moved <= 0.12, "the leaving endpoint's tenth and at most 2% more: " + moved);
    }

    @Test
    void aTableThatChangesSizeKeepsItsOldSlotsForThePacketsCrossingTheCommit() {
        ServicePort web = port("nodeport", LbAlgorithm.MAGLEV);
        Fragment eight = R.service(IpFamily.V4, web, manyEps(8), NODE);
        Fragment nine = R.service(IpFamily.V4, web, manyEps(9), NODE, eight);
        Fragment kept = Transitions.between(eight, nine, Set.of());
        assertEquals(Set.of("ip-maglev-slots-809", "nodeport-maglev-slots-809"), kept.elements().keySet());
        assertEquals(eight.elements().get("ip-maglev-slots-809"), kept.elements().get("ip-maglev-slots-809"),
                "every slot as it was: a packet that read the old verdict finds its slot");
        assertEquals(Set.of("ip-maglev-slots-809", "nodeport-maglev-slots-809"), kept.demands().stream()
                .filter(MaglevPick::isSlotsMap).collect(java.util.stream.Collectors.toSet()), "the old size's map and chain stay meanwhile");

        // Hashed no more (the annotation removed): the frontend picks through the tree now, and a
        // packet that read the old verdict still finds its slot.
        Fragment random = R.service(IpFamily.V4, web.toBuilder().algorithm(LbAlgorithm.RANDOM).build(), manyEps(8), NODE,
                eight);
        Fragment keptForTheTree = Transitions.between(eight, random, Set.of());
        assertEquals(809, keptForTheTree.elements().get("ip-maglev-slots-809").size());
        assertEquals(809, keptForTheTree.elements().get("nodeport-maglev-slots-809").size());

        Fragment seven = R.service(IpFamily.V4, web, manyEps(7), NODE, eight);
        assertEquals(Fragment.EMPTY, Transitions.between(eight, seven, Set.of()), "within a size every slot is in both generations");
        assertEquals(Fragment.EMPTY, Transitions.between(eight, null, Set.of()), "a frontend sent on no more keeps nothing");
    }

    @Test
    void slotsMapsParseBackAndNothingElseDoes() {
        MaglevPick.SlotsMap m = MaglevPick.parse("nodeport-source-hash-slots-1601");
        assertEquals(new MaglevPick.SlotsMap(PickTree.Kind.NODEPORT, LbAlgorithm.SOURCE_HASH, 1601), m);
        assertEquals("nodeport-source-hash-1601", m.chain());
        for (String other : List.of("ip-maglev-809", "ip-local-maglev-slots-809", "ip-maglev-slots-", "ip-maglev-slots-80x",
                "ip-random-slots-809", "service-endpoints-1-8", "ip-maglev-slots-0809")) {
            assertNull(MaglevPick.parse(other), other);
        }
        assertTrue(NftRenderer.isOnDemandSet("ip-maglev-slots-809"));
    }
}
