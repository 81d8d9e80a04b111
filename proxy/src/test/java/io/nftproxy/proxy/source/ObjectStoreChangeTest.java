package io.nftproxy.proxy.source;

import static io.nftproxy.proxy.source.FrontendConflictTest.id;
import static io.nftproxy.proxy.source.FrontendConflictTest.put;
import static io.nftproxy.proxy.source.FrontendConflictTest.service;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.source.KubeObject.SliceRecord;

/** The store's change tracking: what a snapshot reports as changed after each kind of update. */
class ObjectStoreChangeTest {
    private static final ObjectKey A = new ObjectKey(ObjectKey.Kind.SERVICE, "ns", "a");

    /** A store holding services a and b (one endpoint each), with the first snapshot taken. */
    private static ObjectStore synced() {
        ObjectStore store = new ObjectStore("node-a");
        put(store, service("a", "10.96.0.10", "", "10.244.0.1") + service("b", "10.96.0.11", "", "10.244.0.2"));
        ObjectStore.Snapshot first = store.snapshot();
        assertEquals(Set.of(id("a"), id("b")), first.changed());
        assertTrue(first.nodeChanged(), "the first snapshot programs the node");
        return store;
    }

    static Stream<Arguments> updates() {
        return Stream.of(
                Arguments.of("nothing", (Consumer<ObjectStore>) s -> { }, Set.of()),
                Arguments.of("the same objects again (an informer resync)",
                        (Consumer<ObjectStore>) s -> put(s, service("a", "10.96.0.10", "", "10.244.0.1")), Set.of()),
                Arguments.of("a's endpoint moved",
                        (Consumer<ObjectStore>) s -> put(s, service("a", "10.96.0.10", "", "10.244.0.9")), Set.of("a")),
                Arguments.of("a's Service changed",
                        (Consumer<ObjectStore>) s -> put(s, service("a", "10.96.0.10", ", sessionAffinity: ClientIP", "10.244.0.1")),
                        Set.of("a")),
                Arguments.of("a changed and changed back before the sync",
                        (Consumer<ObjectStore>) s -> {
                            put(s, service("a", "10.96.0.10", "", "10.244.0.9"));
                            put(s, service("a", "10.96.0.10", "", "10.244.0.1"));
                        }, Set.of()),
                Arguments.of("a's Service deleted (its slice stays)",
                        (Consumer<ObjectStore>) s -> s.remove(A), Set.of("a")),
                Arguments.of("a's slice deleted",
                        (Consumer<ObjectStore>) s -> s.remove(new ObjectKey(ObjectKey.Kind.ENDPOINT_SLICE, "ns", "a-1")), Set.of("a")),
                Arguments.of("a's slice relabelled to b: both change",
                        (Consumer<ObjectStore>) s -> put(s, "kind: EndpointSlice\nmetadata: {name: a-1, namespace: ns, "
                                + "labels: {kubernetes.io/service-name: b}}\naddressType: IPv4\n"
                                + "ports: [{name: http, port: 8080}]\nendpoints: [{addresses: [10.244.0.1]}]\n"),
                        Set.of("a", "b")),
                Arguments.of("a second slice repeating a's endpoint is no change",
                        (Consumer<ObjectStore>) s -> put(s, "kind: EndpointSlice\nmetadata: {name: a-2, namespace: ns, "
                                + "labels: {kubernetes.io/service-name: a}}\naddressType: IPv4\n"
                                + "ports: [{name: http, port: 8080}]\nendpoints: [{addresses: [10.244.0.1]}]\n"),
                        Set.of()),
                Arguments.of("the Node changed: no service port changes",
                        (Consumer<ObjectStore>) s -> put(s, "kind: Node\nmetadata: {name: node-a, labels: {topology.kubernetes.io/zone: z1}}\n"),
                        Set.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("updates")
    void aSnapshotReportsWhatChanged(String what, Consumer<ObjectStore> update, Set<String> changed) {
        ObjectStore store = synced();
        update.accept(store);
        ObjectStore.Snapshot s = store.snapshot();
        assertEquals(changed.stream().map(FrontendConflictTest::id).collect(Collectors.toSet()), s.changed(), what);
        assertEquals(Set.of(), store.snapshot().changed(), "a second snapshot has nothing new");
    }

    @Test
    void countsAndTriggerTimesAreTakenOnce() {
        ObjectStore store = synced();
        assertArrayEquals(new long[] {0, 0}, store.pending());
        put(store, service("a", "10.96.0.10", "", "10.244.0.9"));
        store.remove(A);
        assertArrayEquals(new long[] {1, 1}, store.pending(), "the Service put again unchanged is no change; its slice changed; the Service removed");
        Instant t = Instant.parse("2026-11-22T10:00:00Z");
        store.put(new SliceRecord(new ObjectKey(ObjectKey.Kind.ENDPOINT_SLICE, "ns", "a-1"), A, Map.of(), List.of(), t));
        ObjectStore.Snapshot s = store.snapshot();
        assertEquals(1, s.serviceChanges());
        assertEquals(2, s.endpointChanges());
        assertEquals(List.of(new ObjectStore.Trigger(t, Set.of(IpFamily.V4))), s.triggerTimes(),
                "with the family of the endpoints the slice had");
        assertFalse(s.nodeChanged());
        assertArrayEquals(new long[] {0, 0}, store.pending());
        assertEquals(List.of(), store.snapshot().triggerTimes());
    }

    @Test
    void aServiceWithoutSlicesHasNoEndpointsAndSlicesWithoutAServiceHaveNoPort() {
        ObjectStore store = synced();
        store.remove(A);
        ObjectStore.Snapshot s = store.snapshot();
        assertFalse(s.state().services().containsKey(id("a")));
        assertEquals(1, s.state().endpoints().get(id("a")).size(), "the slice's endpoints are kept for when the Service returns");
        put(store, service("a", "10.96.0.10", "", "10.244.0.1"));
        assertEquals(Set.of(id("a")), store.snapshot().changed());
    }

    @Test
    void anEndpointInTwoSlicesIsOneAndTheCopyNotTerminatingWins() throws Exception {
        InetAddress ip = InetAddress.getByName("10.244.0.7");
        Endpoint terminating = Endpoint.builder(ip, 8080).node("n").ready(false).terminating(true).build();
        Endpoint ready = Endpoint.ready(ip, 8080, "n");
        Endpoint other = Endpoint.ready(ip, 9090, "n");
        assertEquals(List.of(ready, other), SliceIndex.dedupe(List.of(terminating, other, ready)));
        assertEquals(List.of(ready), SliceIndex.dedupe(List.of(ready, terminating)));
        assertEquals(List.of(terminating, other), SliceIndex.dedupe(List.of(terminating, other)));
        // Past the size compared pairwise, the same through a map.
        List<Endpoint> many = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            many.add(Endpoint.ready(InetAddress.getByAddress(new byte[] {10, 0, 0, (byte) i}), 8080, "n"));
        }
        assertEquals(many, SliceIndex.dedupe(many));
        List<Endpoint> twice = new ArrayList<>(many);
        twice.add(20, terminating);
        twice.add(terminating);
        twice.add(ready);
        List<Endpoint> expected = new ArrayList<>(many);
        expected.add(20, ready);
        assertEquals(expected, SliceIndex.dedupe(twice));
    }

    @Test
    void portsEqualOnBothSidesAreNotChanges() throws Exception {
        ServicePortName http = new ServicePortName("ns", "a", "http", Protocol.TCP);
        ServicePortName dns = new ServicePortName("ns", "a", "dns", Protocol.UDP);
        List<Endpoint> one = List.of(Endpoint.ready(InetAddress.getByName("10.244.0.1"), 53, "n"));
        ServiceState before = new ServiceState(Map.of(), Map.of(http, one, dns, one));
        assertEquals(Set.of(), ServiceState.changed(before, before));
        assertEquals(Set.of(dns), ServiceState.changed(before, new ServiceState(Map.of(), Map.of(http, one))),
                "only the port whose endpoints went");
        assertEquals(Set.of(http, dns), ServiceState.changed(before, ServiceState.ABSENT));
        assertEquals(Set.of(http, dns), ServiceState.changed(ServiceState.ABSENT, before));
    }
}
