package io.nftproxy.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.manifest.Yaml;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.source.KubeModel;
import io.nftproxy.proxy.source.ObjectStore;

/** The manifests the bench writes for `run --once` and the watched directory read back as the services it meant. */
class BenchYamlTest {
    @Test
    void theBenchsManifestsReadBackAsItsModel() {
        ProxyState s = BenchState.synthetic(40, 4, 0);
        StringBuilder yaml = new StringBuilder();
        for (ServicePort svc : s.sortedServices()) {
            BenchYaml.append(yaml, svc, s.endpointsOf(svc.id()), "-x");
        }
        ObjectStore store = new ObjectStore("node-a");
        List<String> problems = new ArrayList<>();
        Yaml.documents(yaml.toString()).forEach(d -> KubeModel.objects(d, problems::add).forEach(store::put));
        assertTrue(problems.isEmpty(), problems.toString());
        ProxyState read = store.snapshot().state();
        assertEquals(s.services().size(), read.services().size());
        for (ServicePort svc : s.sortedServices()) {
            ServicePort got = read.services().get(svc.id());
            assertEquals(svc.clusterIPs(), got.clusterIPs(), svc.id().toString());
            assertEquals(svc.port(), got.port());
            assertEquals(svc.nodePort(), got.nodePort(), svc.id() + " NodePort");
            assertEquals(s.endpointsOf(svc.id()), read.endpointsOf(svc.id()), svc.id() + " endpoints");
        }
    }
}
