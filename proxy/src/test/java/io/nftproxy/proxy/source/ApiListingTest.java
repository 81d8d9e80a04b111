package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceList;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.nftproxy.sandbox.PagingApiDispatcher;
import io.nftproxy.sandbox.Sandbox;

/**
 * Services and EndpointSlices are listed in pages, as an API server pages them when asked with a
 * limit (see {@code KubernetesSource#LIST_PAGE}).
 */
class ApiListingTest {
    /**
     * 1,001 Services and as many EndpointSlices come in three pages each, and every one reaches
     * the store. Only a listing's first page takes a rate-limit token: with eight tokens at once
     * (the four listings' first pages, the four watches the start waits for) and the next one
     * 100 s away, the four later pages would otherwise wait past the 60 s the start waits.
     */
    @Test
    void listingsComeInPagesAndEveryObjectArrives() throws Exception {
        ApiRateLimitTest.TimedDispatcher api = new ApiRateLimitTest.TimedDispatcher();
        KubernetesMockServer server = serve(api);
        int n = 2 * (int) KubernetesSource.LIST_PAGE + 1;
        try (KubernetesClient setup = server.createClient()) {
            for (int i = 0; i < n; i++) {
                String ip = "10.96." + (i / 250) + "." + (i % 250 + 1);
                setup.services().inNamespace("shop").resource(KubernetesSourceKernelTest.service("s" + i, ip)).create();
                setup.discovery().v1().endpointSlices().inNamespace("shop")
                        .resource(KubernetesSourceKernelTest.slice("s" + i, "10.244." + (i / 250) + "." + (i % 250 + 1))).create();
            }
            ObjectStore store = new ObjectStore("node-a");
            synchronized (api) {
                api.arrivals.clear();
                api.lines.clear();
            }
            try (KubernetesSource source = new KubernetesSource(setup.getConfiguration(), store, 0.01f, 8)) {
                try {
                    source.start();
                } catch (IOException e) {
                    synchronized (api) {
                        throw new AssertionError("the requests: " + api.lines, e);
                    }
                }
                assertEquals(n, store.serviceCount(), "services in the store");
                assertEquals(n, store.snapshot().state().services().size(), "service ports with their slices");
                assertTrue(store.snapshot().state().services().values().stream()
                        .allMatch(svc -> store.snapshot().state().endpointsOf(svc.id()).size() == 1), "every slice arrived");
            }
            List<String> pages = api.pages();
            assertEquals(3, pages.stream().filter(p -> p.startsWith("/api/v1/services?")).count(), "services pages: " + pages);
            assertEquals(3, pages.stream().filter(p -> p.startsWith("/apis/discovery.k8s.io/v1/endpointslices?")).count(),
                    "endpoint slices pages: " + pages);
        } finally {
            destroy(server);
        }
    }

    /**
     * The start waits until the whole listing has reached the store, also when a listing failed
     * halfway and started again. 501 services come in two pages; the first attempt's second page
     * fails, a service of the first page changes before the second attempt (an update on top of
     * the first attempt's adds), and the events after the listing's last news are held up. The
     * start must not be over before they go on: counting events against the listing's size, as
     * the start did before, said "delivered" there.
     */
    @Test
    void aListingStartedAgainIsDeliveredWholeBeforeTheStartIsOver() throws Exception {
        AtomicBoolean failed = new AtomicBoolean();
        PagingApiDispatcher api = new PagingApiDispatcher() {
            @Override
            public MockResponse handleGet(String path) {
                System.err.println("GET " + System.nanoTime() / 1000000 + " " + path);
                if (path.startsWith("/api/v1/services?") && path.contains("continue=") && failed.compareAndSet(false, true)) {
                    return new MockResponse().setResponseCode(500)
                            .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":500}");
                }
                return super.handleGet(path);
            }
        };
        KubernetesMockServer server = serve(api);
        int n = (int) KubernetesSource.LIST_PAGE + 1;
        try (KubernetesClient setup = server.createClient()) {
            for (int i = 0; i < n; i++) {
                setup.services().inNamespace("shop")
                        .resource(KubernetesSourceKernelTest.service("s" + i, "10.96." + (i / 250) + "." + (i % 250 + 1))).create();
            }
            ObjectStore store = new ObjectStore("node-a");
            CompletableFuture<Void> started = new CompletableFuture<>();
            AtomicBoolean startOverWhileHeldUp = new AtomicBoolean();
            AtomicBoolean heldUp = new AtomicBoolean();
            store.onChange(() -> {
                // On the informer's event thread, once the listing's last news reached the store
                // (every service, s0's port renamed; in whichever order the pages bring them):
                // hold the events behind it up for as long as the start takes to be over (or 5 s).
                if (store.serviceCount() == n && !heldUp.get() && store.snapshot().state().services().keySet().stream()
                        .anyMatch(port -> port.name().equals("s0") && port.port().equals("web"))) {
                    heldUp.set(true);
                    try {
                        started.get(5, TimeUnit.SECONDS);
                    } catch (TimeoutException | InterruptedException | ExecutionException e) {
                        // not over while held up: as it should be
                    }
                    startOverWhileHeldUp.set(started.isDone());
                }
            });
            Config cfg = setup.getConfiguration();
            cfg.setWatchReconnectInterval(3000); // the informer's retry: time to change a service first
            try (KubernetesSource source = new KubernetesSource(cfg, store)) {
                source.startWatching().whenComplete((v, t) -> started.complete(null));
                Sandbox.eventually(Duration.ofSeconds(20), failed::get, "the second page failed once");
                setup.services().inNamespace("shop").withName("s0").edit(svc -> {
                    svc.getSpec().getPorts().get(0).setName("web");
                    return svc;
                });
                System.err.println("EDITED at " + System.nanoTime() / 1000000 + " pages " + api.pages());
                started.get(60, TimeUnit.SECONDS);
                System.err.println("STARTED at " + System.nanoTime() / 1000000 + " pages " + api.pages());
                assertTrue(heldUp.get(), "the start was over before the listing's last news reached the store");
                assertFalse(startOverWhileHeldUp.get(), "the start was over before the listing had reached the store");
                assertEquals(n, store.serviceCount(), "services in the store");
            }
        } finally {
            destroy(server);
        }
    }

    /**
     * The tests' API server pages each listing apart, as kube-apiserver does: two listings of the
     * same query paged at once (nodes starting together) each get the objects there were when it
     * started, once each, and a token it does not know (or of another query) is 410 Gone, after
     * which a client lists again from the start.
     */
    @Test
    void theTestApiServerPagesEachListingApart() throws Exception {
        PagingApiDispatcher api = new PagingApiDispatcher();
        KubernetesMockServer server = serve(api);
        try (KubernetesClient client = server.createClient()) {
            for (int i = 0; i < 5; i++) {
                client.services().inNamespace("shop").resource(KubernetesSourceKernelTest.service("s" + i, "10.96.0." + (i + 1)))
                        .create();
            }
            // The first listing starts, a service is added, the second starts: each is paged from
            // what was there when it started, however their pages interleave.
            List<List<String>> seen = List.of(new ArrayList<>(), new ArrayList<>());
            String[] next = new String[2];
            for (int round = 0; round < 3; round++) {
                for (int who = 0; who < 2; who++) {
                    if (round > 0 && next[who] == null) {
                        continue;
                    }
                    ServiceList page = client.services().inAnyNamespace()
                            .list(new ListOptionsBuilder().withLimit(2L).withContinue(next[who]).build());
                    for (Service svc : page.getItems()) {
                        seen.get(who).add(svc.getMetadata().getName());
                    }
                    next[who] = page.getMetadata().getContinue();
                    if (round == 0 && who == 0) {
                        client.services().inNamespace("shop").resource(KubernetesSourceKernelTest.service("s5", "10.96.0.6"))
                                .create();
                    }
                }
            }
            assertEquals(List.of("s0", "s1", "s2", "s3", "s4"), seen.get(0).stream().sorted().toList(), "the first listing");
            assertEquals(List.of("s0", "s1", "s2", "s3", "s4", "s5"), seen.get(1).stream().sorted().toList(), "the second");
            KubernetesClientException gone = assertThrows(KubernetesClientException.class, () -> client.services().inAnyNamespace()
                    .list(new ListOptionsBuilder().withLimit(2L).withContinue("99:2").build()));
            assertEquals(410, gone.getCode(), "an unknown continue token");
            String token = client.services().inAnyNamespace().list(new ListOptionsBuilder().withLimit(2L).build()).getMetadata()
                    .getContinue();
            KubernetesClientException elsewhere = assertThrows(KubernetesClientException.class, () -> client.services()
                    .inNamespace("shop").list(new ListOptionsBuilder().withLimit(2L).withContinue(token).build()));
            assertEquals(410, elsewhere.getCode(), "a token handed to another query");
        } finally {
            destroy(server);
        }
    }

    /**
     * A watch from a listing's resource version hears what changed after it, as kube-apiserver's
     * does, not every object again as ADDED (the mock alone would open it so).
     */
    @Test
    void theTestApiServerWatchesFromTheVersionAsked() throws Exception {
        KubernetesMockServer server = serve(new PagingApiDispatcher());
        try (KubernetesClient client = server.createClient()) {
            for (int i = 0; i < 3; i++) {
                client.services().inNamespace("shop").resource(KubernetesSourceKernelTest.service("s" + i, "10.96.0." + (i + 1)))
                        .create();
            }
            String version = client.services().inAnyNamespace().list().getMetadata().getResourceVersion();
            List<String> heard = new CopyOnWriteArrayList<>();
            try (Watch w = client.services().inAnyNamespace().withResourceVersion(version).watch(new Watcher<>() {
                @Override
                public void eventReceived(Action action, Service svc) {
                    heard.add(action + " " + svc.getMetadata().getName());
                }

                @Override
                public void onClose(WatcherException cause) {
                }
            })) {
                client.services().inNamespace("shop").resource(KubernetesSourceKernelTest.service("s3", "10.96.0.4")).create();
                client.services().inNamespace("shop").withName("s0").delete();
                Sandbox.eventually(Duration.ofSeconds(20), () -> heard.size() >= 2, "the watch's events: " + heard);
                assertEquals(List.of("ADDED s3", "DELETED s0"), List.copyOf(heard), "what changed after the version, only");
            }
        } finally {
            destroy(server);
        }
    }

    /**
     * A resync hands every object over again, rebuilt by the informer's cache from its key alone:
     * the service keeps its port and its endpoint through resyncs (it lost them every
     * configSyncPeriod before).
     */
    @Test
    void aResyncChangesNothing() throws Exception {
        PagingApiDispatcher api = new PagingApiDispatcher();
        KubernetesMockServer server = serve(api);
        try (KubernetesClient setup = server.createClient()) {
            setup.services().inNamespace("shop").resource(KubernetesSourceKernelTest.service("cart", "10.96.7.1")).create();
            setup.discovery().v1().endpointSlices().inNamespace("shop")
                    .resource(KubernetesSourceKernelTest.slice("cart", "10.244.7.1")).create();
            ObjectStore store = new ObjectStore("node-a");
            try (KubernetesSource source = new KubernetesSource(setup.getConfiguration(), store)) {
                source.resyncEvery(Duration.ofMillis(100));
                source.start();
                Sandbox.eventually(Duration.ofSeconds(20), () -> source.resyncsSeen() >= 4, "resyncs");
                assertEquals(1, store.snapshot().state().services().size(), "the service port after resyncs");
                assertTrue(store.snapshot().state().services().values().stream()
                        .allMatch(svc -> store.snapshot().state().endpointsOf(svc.id()).size() == 1), "its endpoint");
            }
        } finally {
            destroy(server);
        }
    }

    /** fabric8's mock API server over {@code api}, on a loopback port of its own. */
    static KubernetesMockServer serve(PagingApiDispatcher api) {
        KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), api, false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        return server;
    }

    /**
     * The mock server waits at its close for the streams still open on it, and may wait in
     * vain: the JDK's HTTP client (17) cannot close its connections, and fabric8's close stops
     * the client's executor, which may take the watches' stream resets with it. What the test
     * asserts is said by then.
     */
    static void destroy(KubernetesMockServer server) {
        try {
            server.destroy();
        } catch (IllegalStateException e) {
            if (!String.valueOf(e.getMessage()).startsWith("Unable to close")) {
                throw e;
            }
        }
    }
}
