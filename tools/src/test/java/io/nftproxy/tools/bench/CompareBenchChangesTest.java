package io.nftproxy.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;

/** The changes `bench --compare` times: each kind of service the issue names is changed on its own. */
class CompareBenchChangesTest {
    @Test
    void eachKindOfServiceGetsChangesOfItsOwn() {
        int n = 1000;
        ProxyState s = BenchState.mixed(n, 10);
        for (int r = 0; r < 20; r++) {
            List<CompareBench.Change> changes = CompareBench.changes(s, n, r);
            List<String> names = new ArrayList<>(List.of("endpoint replaced", "endpoint added", "endpoint removed",
                    "service added", "service removed"));
            for (String kind : List.of("sticky service", "Local service", ">128 endpoints")) {
                for (String change : List.of("endpoint added", "endpoint removed", "service added", "service removed")) {
                    names.add(change + " (" + kind + ")");
                }
            }
            names.addAll(List.of("service added (source ranges)", "service removed (source ranges)"));
            assertEquals(names, changes.stream().map(CompareBench.Change::sample).toList());
            assertEquals(CompareBench.CHANGES_PER_REPETITION, changes.size());

            Map<String, CompareBench.Change> by = new LinkedHashMap<>();
            Map<String, ProxyState> before = new LinkedHashMap<>();
            ProxyState prev = s;
            for (CompareBench.Change c : changes) {
                by.put(c.sample(), c);
                before.put(c.sample(), prev);
                prev = c.state();
            }
            for (String kind : List.of("", " (sticky service)", " (Local service)", " (>128 endpoints)")) {
                CompareBench.Change added = by.get("endpoint added" + kind);
                CompareBench.Change removed = by.get("endpoint removed" + kind);
                assertEquals(before.get("endpoint added" + kind).endpointsOf(added.id()).size() + 1,
                        added.state().endpointsOf(added.id()).size(), kind);
                assertEquals(added.id(), removed.id());
                assertEquals(added.state().endpointsOf(added.id()).size() - 1, removed.state().endpointsOf(removed.id()).size(), kind);
                CompareBench.Change svcAdded = by.get("service added" + kind);
                CompareBench.Change svcRemoved = by.get("service removed" + kind);
                assertTrue(svcAdded.state().services().containsKey(svcAdded.id()), kind);
                assertFalse(svcRemoved.state().services().containsKey(svcAdded.id()), kind + " and it goes");
            }
            for (String change : List.of("endpoint added", "service added")) {
                CompareBench.Change sticky = by.get(change + " (sticky service)");
                assertTrue(sticky.state().services().get(sticky.id()).affinitySeconds() > 0, sticky.id() + " is sticky");
                CompareBench.Change local = by.get(change + " (Local service)");
                ServicePort lo = local.state().services().get(local.id());
                assertTrue(lo.externalPolicyLocal() && lo.hasExternal(), local.id() + " has externalTrafficPolicy Local");
                CompareBench.Change many = by.get(change + " (>128 endpoints)");
                int had = many.state().endpointsOf(many.id()).size();
                assertTrue(had > 128, many.id() + " has more endpoints than the shared chains pick among: " + had);
            }
            CompareBench.Change ranged = by.get("service added (source ranges)");
            assertEquals(BenchState.SOURCE_RANGES, ranged.state().services().get(ranged.id()).loadBalancerSourceRanges());
            assertEquals(s.services().keySet(), changes.get(changes.size() - 1).state().services().keySet(),
                    "every service added goes again");
            s = changes.get(changes.size() - 1).state();
        }
    }
}
