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
}
