package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.internal.MockDispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.nftproxy.sandbox.PagingApiDispatcher;

/**
 * clientConnection.qps and burst reach the API server as kube-proxy's client-go limits them: with
 * 4 a second and a burst of 1, the informers' n-th list or watch arrives no sooner than n quarter
 * seconds after the start (a bound the limit promises, not a measure of speed).
 */
class ApiRateLimitTest {
    /** The API's objects, with the time each request arrived. */
    static final class TimedDispatcher extends PagingApiDispatcher {
        final List<Long> arrivals = new ArrayList<>();
        final List<String> lines = new ArrayList<>();

        @Override
        public synchronized MockResponse dispatch(RecordedRequest request) {
            arrivals.add(System.nanoTime());
            lines.add(request.getRequestLine());
            return super.dispatch(request);
        }
    }

    @Test
    void requestsAreSpacedByTheConfiguredRate() throws Exception {
        TimedDispatcher api = new TimedDispatcher();
        KubernetesMockServer server = ApiListingTest.serve(api);
        try (KubernetesClient setup = server.createClient()) {
            setup.services().inNamespace("shop").resource(KubernetesSourceKernelTest.service("cart", "10.96.7.1")).create();
            Config cfg = setup.getConfiguration();
            List<Long> times;
            List<String> lines;
            synchronized (api) {
                api.arrivals.clear();
                api.lines.clear();
            }
            long t0 = System.nanoTime(); // the bucket is made after this: its i-th token is due i/4 s later
            try (KubernetesSource source = new KubernetesSource(cfg, new ObjectStore("node-a"), 4, 1)) {
                source.start();
                synchronized (api) {
                    times = List.copyOf(api.arrivals);
                    lines = List.copyOf(api.lines);
                }
            }
            assertTrue(times.size() >= 4, "the informers listed: " + lines);
            for (int i = 1; i < times.size(); i++) {
                long afterMs = (times.get(i) - t0) / 1_000_000;
                assertTrue(afterMs >= i * 250L, "request " + i + " came " + afterMs + " ms after the start, before its token"
                        + " at 4 a second: " + lines);
            }
        } finally {
            server.destroy();
        }
    }
}
