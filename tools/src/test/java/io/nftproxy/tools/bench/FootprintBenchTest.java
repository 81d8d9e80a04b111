package io.nftproxy.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** What the footprint bench takes from the deployment and from a scrape. */
class FootprintBenchTest {
    @Test
    void theContainerGetsTheDaemonSetsLimitAndJvmOptions() throws Exception {
        FootprintBench.DaemonSet ds = FootprintBench.DaemonSet.of(Path.of("..", "deploy", "nftproxy.yaml"));
        // Kubernetes' quantity in podman's spelling: 1Gi is podman's 1g (both 2^30 bytes).
        assertTrue(ds.memoryLimit().matches("\\d+[kmgt]?"), ds.memoryLimit());
        assertTrue(ds.javaToolOptions().contains("-XX:"), "the proxy container's JAVA_TOOL_OPTIONS: " + ds.javaToolOptions());
    }

    @Test
    void aScrapeIsReadBySeries() {
        Map<String, Double> m = FootprintBench.metrics("""
                # HELP jvm_threads_current Current thread count of a JVM
                # TYPE jvm_threads_current gauge
                jvm_threads_current 17.0
                jvm_memory_bytes_used{area="heap",} 2.5165824E7
                jvm_memory_pool_bytes_used{pool="CodeHeap 'non-nmethods'",} 1234.0
                """);
        assertEquals(17.0, m.get("jvm_threads_current"));
        assertEquals(2.5165824E7, m.get("jvm_memory_bytes_used{area=\"heap\",}"));
        assertEquals(1234.0, m.get("jvm_memory_pool_bytes_used{pool=\"CodeHeap 'non-nmethods'\",}"));
        assertEquals(3, m.size(), "comments are not series");
    }

    @Test
    void aHeapHistogramIsReadByClassWithItsTotal() {
        FootprintBench.LiveHeap live = FootprintBench.LiveHeap.parse("""
                12345:
                 num     #instances         #bytes  class name (module)
                -------------------------------------------------------
                   1:         52100        5044216  [B (java.base@17.0.15)
                   2:         50311        1207464  java.lang.String (java.base@17.0.15)
                   3:            10            480  io.nftproxy.proxy.model.ServicePort
                Total        102421        6252160
                """);
        assertEquals(5044216L, live.byClass().get("[B"));
        assertEquals(480L, live.byClass().get("io.nftproxy.proxy.model.ServicePort"));
        assertEquals(3, live.byClass().size(), "the header and the total are not classes");
        assertEquals(6252160L, live.total());
    }
}
