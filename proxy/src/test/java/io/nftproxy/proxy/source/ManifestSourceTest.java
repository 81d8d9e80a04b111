package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.sandbox.Sandbox;

/** The watched manifest directory, against a store: what is read again, and what reaches the store. */
class ManifestSourceTest {
    @TempDir
    Path dir;

    private static String service(int i, String... endpoints) {
        StringBuilder sb = new StringBuilder("apiVersion: v1\nkind: Service\nmetadata: {name: svc-" + i + ", namespace: ns}\n"
                + "spec: {clusterIP: 10.96." + (i / 250) + "." + (i % 250 + 1) + ", ports: [{name: http, port: 80}]}\n---\n"
                + "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: svc-" + i + "-x, namespace: ns,"
                + " labels: {kubernetes.io/service-name: svc-" + i + "}}\naddressType: IPv4\nports: [{name: http, port: 8080}]\n"
                + "endpoints:\n");
        for (String e : endpoints) {
            sb.append("- {addresses: [").append(e).append("], nodeName: node-b}\n");
        }
        return sb.toString();
    }

    private static ServicePortName id(int i) {
        return new ServicePortName("ns", "svc-" + i, "http", Protocol.TCP);
    }

    /** Writes through a hidden temporary file and a rename, as kubectl, editors and config tools do. */
    private void replace(String name, String text) throws IOException {
        Path tmp = dir.resolve("." + name + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private static void eventually(Callable<Boolean> cond, String what) throws Exception {
        Sandbox.eventually(Duration.ofSeconds(20), cond, what); // the watcher runs on its own thread
    }

    private static List<String> addresses(ProxyState s, int i) {
        return s.endpointsOf(id(i)).stream().map(Endpoint::hostPort).toList();
    }

    @Test
    void oneFileReplacedIsTheOnlyFileReadAgain() throws Exception {
        int n = 300;
        for (int i = 0; i < n; i++) {
            Files.writeString(dir.resolve("svc-" + i + ".yaml"), service(i, "10.244.0." + (i % 250 + 1)));
        }
        ObjectStore store = new ObjectStore("node-a");
        try (ManifestSource src = new ManifestSource(dir, store)) {
            src.start(true);
            assertEquals(n, src.filesRead());
            ObjectStore.Snapshot first = store.snapshot();
            assertEquals(n, first.state().services().size());

            replace("svc-7.yaml", service(7, "10.244.9.9"));
            eventually(() -> store.pending()[1] > 0, "the changed slice reaches the store");
            ObjectStore.Snapshot snap = store.snapshot();
            assertEquals(List.of("10.244.9.9:8080"), addresses(snap.state(), 7));
            assertEquals(Set.of(id(7)), snap.changed(), "only the edited service changed");
            assertEquals(0, snap.serviceChanges(), "the Service in the file is unchanged");
            assertEquals(n + 1, src.filesRead(), "only the replaced file was read again");
            assertEquals(1, src.rescans(), "no rescan of the directory");

            // The same bytes written again: read, but nothing reaches the store.
            replace("svc-8.yaml", service(8, "10.244.0.9"));
            eventually(() -> src.filesRead() == n + 2, "the rewritten file is read");
            assertEquals(0, store.pending()[0] + store.pending()[1]);

            // A removed file takes its objects with it.
            Files.delete(dir.resolve("svc-9.yaml"));
            eventually(() -> store.pending()[0] > 0, "the deletion reaches the store");
            assertFalse(store.snapshot().state().services().containsKey(id(9)));
        }
    }

    @Test
    void aLabelThatMovesALiveServiceToAnotherProxyTakesItsRulesAwayAndBack() throws Exception {
        Files.writeString(dir.resolve("a.yaml"), service(1, "10.244.0.1"));
        ObjectStore store = new ObjectStore("node-a");
        try (ManifestSource src = new ManifestSource(dir, store)) {
            src.start(true);
            assertTrue(store.snapshot().state().services().containsKey(id(1)));
            String other = "metadata: {name: svc-1, namespace: ns, labels: {service.kubernetes.io/service-proxy-name: other}}";
            replace("a.yaml", service(1, "10.244.0.1").replace("metadata: {name: svc-1, namespace: ns}", other));
            eventually(() -> !store.snapshot().state().services().containsKey(id(1)), "the service leaves");
            replace("a.yaml", service(1, "10.244.0.1"));
            eventually(() -> store.snapshot().state().services().containsKey(id(1)), "and comes back without the label");
            assertEquals(List.of("10.244.0.1:8080"), addresses(store.snapshot().state(), 1));
        }
        // Running beside kube-proxy: only the labelled service is ours.
        ObjectStore mine = new ObjectStore("node-a", new ProxySelection("nftproxy"));
        Files.writeString(dir.resolve("b.yaml"), service(2, "10.244.0.2").replace("metadata: {name: svc-2, namespace: ns}",
                "metadata: {name: svc-2, namespace: ns, labels: {service.kubernetes.io/service-proxy-name: nftproxy}}")
                .replace("labels: {kubernetes.io/service-name: svc-2}",
                        "labels: {kubernetes.io/service-name: svc-2, service.kubernetes.io/service-proxy-name: nftproxy}"));
        try (ManifestSource src = new ManifestSource(dir, mine)) {
            src.start(false);
            ProxyState s = mine.snapshot().state();
            assertEquals(Set.of(id(2)), s.services().keySet());
            assertEquals(List.of("10.244.0.2:8080"), addresses(s, 2), "its slice, labelled too, is ours");
        }
    }

    @Test
    void aFileRefusedAtTheFirstReadIsLoggedAsServingNothingAndLaterAsKeepingItsContent() throws Exception {
        String broken = "kind: Service\nmetadata: {name: [broken\n";
        Files.writeString(dir.resolve("a.yaml"), broken);
        Files.writeString(dir.resolve("b.yaml"), service(2, "10.244.0.2"));
        ObjectStore store = new ObjectStore("node-a");
        Logger log = (Logger) LoggerFactory.getLogger(ManifestSource.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        log.addAppender(logged);
        try (ManifestSource src = new ManifestSource(dir, store)) {
            src.start(true);
            assertEquals(Set.of(id(2)), store.snapshot().state().services().keySet(), "the other file is served");
            assertEquals(List.of("manifest " + dir.resolve("a.yaml") + " does not parse: "),
                    lines(logged, "a.yaml").stream().map(l -> l.substring(0, l.indexOf(": ") + 2)).toList());
            assertTrue(lines(logged, "a.yaml").get(0).endsWith(
                    "; it has no last good content: none of its objects is served until it is fixed"), lines(logged, "a.yaml").toString());

            replace("a.yaml", service(1, "10.244.0.1"));
            eventually(() -> store.snapshot().state().services().containsKey(id(1)), "the fixed file is served");
            replace("a.yaml", broken);
            eventually(() -> lines(logged, "a.yaml").size() == 2, "the second refusal is logged once the writer is done");
            assertTrue(lines(logged, "a.yaml").get(1).endsWith(", keeping its last good content"), lines(logged, "a.yaml").toString());
            assertEquals(List.of("10.244.0.1:8080"), addresses(store.snapshot().state(), 1));
        } finally {
            log.detachAppender(logged);
        }
    }

    /** The messages logged of one file, in order (the appender appends under its own lock). */
    private static List<String> lines(ListAppender<ILoggingEvent> logged, String file) {
        synchronized (logged) {
            return logged.list.stream().map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains(file)).toList();
        }
    }

    @Test
    void aFileThatStopsParsingKeepsItsLastGoodContent() throws Exception {
        Files.writeString(dir.resolve("a.yaml"), service(1, "10.244.0.1"));
        Files.writeString(dir.resolve("b.yaml"), service(2, "10.244.0.2"));
        ObjectStore store = new ObjectStore("node-a");
        try (ManifestSource src = new ManifestSource(dir, store)) {
            src.start(true);
            store.snapshot();
            replace("a.yaml", "kind: Service\nmetadata: {name: [broken\n");
            eventually(() -> store.snapshot().errors().containsKey(Problem.source("file a.yaml")), "the error is reported");
            replace("b.yaml", service(2, "10.244.0.3"));
            eventually(() -> addresses(store.snapshot().state(), 2).equals(List.of("10.244.0.3:8080")),
                    "the other file still applies");
            ProxyState s = store.snapshot().state();
            assertEquals(List.of("10.244.0.1:8080"), addresses(s, 1), "the broken file's last good content stays");
            String err = store.snapshot().errors().get(Problem.source("file a.yaml"));
            assertTrue(err.contains("does not parse") && err.contains("line"), err);

            replace("a.yaml", service(1, "10.244.0.4"));
            eventually(() -> addresses(store.snapshot().state(), 1).equals(List.of("10.244.0.4:8080")), "fixed file applies");
            // The objects are applied, then the file's error is cleared: two steps of the store.
            eventually(() -> !store.snapshot().errors().containsKey(Problem.source("file a.yaml")), "the error goes");
        }
    }

    @Test
    void manyFilesOfOverlappingObjectsApplyInNameOrder() throws Exception {
        // File i defines service i and again service i - 1 (which it wins, coming later by
        // name); every seventh file does not parse, and only its own objects are missing.
        int n = 120;
        for (int i = 0; i < n; i++) {
            String text = i % 7 == 3 ? "kind: Service\nmetadata: {name: [broken\n"
                    : service(i, "10.244.0." + (i + 1)) + (i == 0 ? "" : "---\n" + service(i - 1, "10.244.1." + (i + 1)));
            Files.writeString(dir.resolve(String.format("f-%03d.yaml", i)), text);
        }
        ObjectStore store = new ObjectStore("node-a");
        try (ManifestSource src = new ManifestSource(dir, store)) {
            src.start(true);
            assertEquals(n, src.filesRead());
            ObjectStore.Snapshot snap = store.snapshot();
            for (int i = 0; i < n; i++) {
                boolean good = i % 7 != 3;
                boolean nextGood = i + 1 < n && (i + 1) % 7 != 3;
                List<String> expected = nextGood ? List.of("10.244.1." + (i + 2) + ":8080")
                        : good ? List.of("10.244.0." + (i + 1) + ":8080") : null;
                if (expected == null) {
                    assertFalse(snap.state().services().containsKey(id(i)), "svc-" + i + " is in no good file");
                } else {
                    assertEquals(expected, addresses(snap.state(), i), "svc-" + i);
                }
                assertEquals(!good, snap.errors().containsKey(Problem.source(String.format("file f-%03d.yaml", i))),
                        "file " + i + "'s error");
            }
        }
    }

    @Test
    void anObjectInTwoFilesComesFromTheLastByName() throws Exception {
        Files.writeString(dir.resolve("a.yaml"), service(1, "10.244.0.1"));
        Files.writeString(dir.resolve("b.yaml"), service(1, "10.244.0.2"));
        ObjectStore store = new ObjectStore("node-a");
        try (ManifestSource src = new ManifestSource(dir, store)) {
            src.start(true);
            assertEquals(List.of("10.244.0.2:8080"), addresses(store.snapshot().state(), 1));
            Files.delete(dir.resolve("b.yaml"));
            eventually(() -> addresses(store.snapshot().state(), 1).equals(List.of("10.244.0.1:8080")),
                    "the other file's definition takes over");
            // A file earlier by name that defines it too does not win, and takes over when the later one goes.
            replace("0.yaml", service(1, "10.244.0.3")); // whole at once: read with its content
            eventually(() -> src.filesRead() >= 3, "the new file is read");
            assertEquals(List.of("10.244.0.1:8080"), addresses(store.snapshot().state(), 1));
            Files.delete(dir.resolve("a.yaml"));
            eventually(() -> addresses(store.snapshot().state(), 1).equals(List.of("10.244.0.3:8080")),
                    "the earlier file's definition takes over");
            Files.delete(dir.resolve("0.yaml"));
            eventually(() -> !store.snapshot().state().services().containsKey(id(1)), "no file defines it: it goes");
        }
    }

    @Test
    void theDirectoryRemovedAndCreatedAgainIsWatchedAgain() throws Exception {
        Files.writeString(dir.resolve("a.yaml"), service(1, "10.244.0.1"));
        ObjectStore store = new ObjectStore("node-a");
        Path sub = dir.resolve("manifests");
        Files.createDirectory(sub);
        Files.writeString(sub.resolve("a.yaml"), service(1, "10.244.0.1"));
        try (ManifestSource src = new ManifestSource(sub, store)) {
            src.start(true);
            store.snapshot();
            Files.delete(sub.resolve("a.yaml"));
            Files.delete(sub);
            eventually(() -> !store.snapshot().state().services().containsKey(id(1)), "the removed files' objects go");
            Files.createDirectory(sub);
            Files.writeString(sub.resolve("b.yaml"), service(2, "10.244.0.5"));
            eventually(() -> store.snapshot().state().services().containsKey(id(2)), "the new directory is read");
            replace0(sub, "b.yaml", service(2, "10.244.0.6"));
            eventually(() -> addresses(store.snapshot().state(), 2).equals(List.of("10.244.0.6:8080")),
                    "and watched again");
        }
    }

    private static void replace0(Path d, String name, String text) throws IOException {
        Path tmp = d.resolve("." + name + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, d.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void anOversizedFileIsRefusedUnread() throws Exception {
        Path big = dir.resolve("big.yaml");
        try (var ch = FileChannel.open(big, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE, StandardOpenOption.SPARSE)) {
            ch.write(ByteBuffer.wrap(new byte[] {'#'}), ManifestSource.MAX_FILE_BYTES);
        }
        Files.writeString(dir.resolve("ok.yaml"), service(1, "10.244.0.1"));
        ObjectStore store = new ObjectStore("node-a");
        try (ManifestSource src = new ManifestSource(dir, store)) {
            src.start(false);
            ObjectStore.Snapshot s = store.snapshot();
            assertTrue(s.errors().get(Problem.source("file big.yaml")).contains("the limit is 64 MiB"), s.errors().toString());
            assertEquals(1, s.state().services().size());
            assertEquals(1, src.filesRead(), "the big file was not read");
        }
    }
}
