package io.nftproxy.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

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
            assertEquals(List.of("endpoint replaced", "endpoint added", "service added", "service removed",
                    "endpoint added (sticky service)", "endpoint added (Local service)", "endpoint added (>128 endpoints)",
                    "service added (source ranges)", "service removed (source ranges)"),
                    changes.stream().map(CompareBench.Change::sample).toList());
            assertEquals(CompareBench.CHANGES_PER_REPETITION, changes.size());
            ProxyState before = changes.get(3).state();
            CompareBench.Change sticky = changes.get(4);
            ServicePort st = sticky.state().services().get(sticky.id());
            assertTrue(st.affinitySeconds() > 0, sticky.id() + " is sticky");
            assertEquals(before.endpointsOf(sticky.id()).size() + 1, sticky.state().endpointsOf(sticky.id()).size());
            CompareBench.Change local = changes.get(5);
            ServicePort lo = local.state().services().get(local.id());
            assertTrue(lo.externalPolicyLocal(), local.id() + " has externalTrafficPolicy Local");
            assertEquals(sticky.state().endpointsOf(local.id()).size() + 1, local.state().endpointsOf(local.id()).size());
            CompareBench.Change many = changes.get(6);
            int had = changes.get(5).state().endpointsOf(many.id()).size();
            assertTrue(had > 128, many.id() + " has more endpoints than the shared chains pick among: " + had);
            assertEquals(had + 1, many.state().endpointsOf(many.id()).size());
            CompareBench.Change ranged = changes.get(7);
            assertEquals(BenchState.SOURCE_RANGES, ranged.state().services().get(ranged.id()).loadBalancerSourceRanges());
            assertEquals(many.state().services().keySet(), changes.get(8).state().services().keySet(), "and it goes");
            s = changes.get(8).state();
        }
    }
}
