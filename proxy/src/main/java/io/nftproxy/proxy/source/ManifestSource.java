package io.nftproxy.proxy.source;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * A directory of Kubernetes manifests (YAML or JSON, several documents per file) as the source of
 * Services, EndpointSlices and Nodes. The directory is watched: a file added, changed or removed
 * updates the store. A file that does not parse is reported by name and its last good content
 * stays in effect; the other files are unaffected.
 */
public final class ManifestSource implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ManifestSource.class);

    private final Path dir;
    private final ObjectStore store;
    private final KubernetesSerialization serialization = new KubernetesSerialization();
    private final Map<Path, List<HasMetadata>> lastGood = new HashMap<>();
    private final Map<String, HasMetadata> current = new HashMap<>();
    private final Map<Path, String> fileErrors = new HashMap<>();
    private WatchService watcher;
    private Thread thread;

    public ManifestSource(Path dir, ObjectStore store) {
        this.dir = dir;
        this.store = store;
    }

    /** Reads the directory once, then (if {@code watch}) keeps watching it on a daemon thread. */
    public void start(boolean watch) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new IOException("manifest directory " + dir + " does not exist or is not a directory");
        }
        if (watch) {
            watcher = FileSystems.getDefault().newWatchService();
            dir.register(watcher, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY,
                    StandardWatchEventKinds.ENTRY_DELETE);
        }
        rescan();
        if (watch) {
            thread = new Thread(this::watchLoop, "manifests-" + dir.getFileName());
            thread.setDaemon(true);
            thread.start();
        }
    }

    private void watchLoop() {
        try {
            while (true) {
                WatchKey k = watcher.take();
                // Editors write files in several steps: let a burst settle, then read once.
                WatchKey more;
                do {
                    k.pollEvents();
                    k.reset();
                    more = watcher.poll(100, TimeUnit.MILLISECONDS);
                    if (more != null) {
                        k = more;
                    }
                } while (more != null);
                rescan();
            }
        } catch (InterruptedException | ClosedWatchServiceException e) {
            // closing
        }
    }

    /** Re-reads every manifest and applies the differences to the store. */
    public synchronized void rescan() {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.filter(p -> {
                String n = p.getFileName().toString();
                return !n.startsWith(".") && (n.endsWith(".yaml") || n.endsWith(".yml") || n.endsWith(".json"));
            }).sorted().forEach(files::add);
        } catch (IOException e) {
            LOG.error("cannot list manifest directory {}: {}", dir, e.getMessage());
            return;
        }
        lastGood.keySet().retainAll(files);
        for (Path f : new ArrayList<>(fileErrors.keySet())) {
            if (!files.contains(f)) {
                fileErrors.remove(f);
                store.reportSourceError("file " + f.getFileName(), null);
            }
        }
        for (Path f : files) {
            try {
                lastGood.put(f, parse(Files.readString(f, StandardCharsets.UTF_8)));
                if (fileErrors.remove(f) != null) {
                    store.reportSourceError("file " + f.getFileName(), null);
                }
            } catch (IOException | RuntimeException e) {
                String msg = e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
                if (!msg.equals(fileErrors.get(f))) {
                    LOG.error("manifest {} does not parse, keeping its last good content: {}", f, msg);
                }
                fileErrors.put(f, msg);
                store.reportSourceError("file " + f.getFileName(), "does not parse: " + msg);
            }
        }
        Map<String, HasMetadata> next = new LinkedHashMap<>();
        for (List<HasMetadata> objs : lastGood.values()) {
            for (HasMetadata o : objs) {
                next.put(identity(o), o);
            }
        }
        for (Map.Entry<String, HasMetadata> e : current.entrySet()) {
            if (!next.containsKey(e.getKey())) {
                delete(e.getValue());
            }
        }
        for (Map.Entry<String, HasMetadata> e : next.entrySet()) {
            if (!e.getValue().equals(current.get(e.getKey()))) {
                upsert(e.getValue());
            }
        }
        current.clear();
        current.putAll(next);
    }

    private static String identity(HasMetadata o) {
        String ns = o.getMetadata().getNamespace();
        return o.getKind() + "/" + (ns == null ? "default" : ns) + "/" + o.getMetadata().getName();
    }

    private void upsert(HasMetadata o) {
        if (o instanceof Service s) {
            store.upsertService(s);
        } else if (o instanceof EndpointSlice es) {
            store.upsertSlice(es);
        } else if (o instanceof Node n) {
            store.upsertNode(n);
        }
    }

    private void delete(HasMetadata o) {
        if (o instanceof Service s) {
            store.deleteService(s);
        } else if (o instanceof EndpointSlice es) {
            store.deleteSlice(es);
        } else if (o instanceof Node n) {
            store.deleteNode(n);
        }
    }

    /** The Services, EndpointSlices and Nodes in a multi-document YAML or JSON text. */
    List<HasMetadata> parse(String text) {
        List<HasMetadata> out = new ArrayList<>();
        for (String doc : text.split("(?m)^---\\s*$")) {
            if (doc.lines().allMatch(l -> l.isBlank() || l.trim().startsWith("#"))) {
                continue;
            }
            KubernetesResource r = serialization.unmarshal(doc);
            collect(r, out);
        }
        return out;
    }

    private static void collect(KubernetesResource r, List<HasMetadata> out) {
        if (r instanceof KubernetesList l) {
            l.getItems().forEach(i -> collect(i, out));
        } else if (r instanceof Service || r instanceof EndpointSlice || r instanceof Node) {
            HasMetadata h = (HasMetadata) r;
            if (h.getMetadata() == null || h.getMetadata().getName() == null) {
                throw new IllegalArgumentException(h.getKind() + " without metadata.name");
            }
            out.add(h);
        }
    }

    @Override
    public void close() {
        try {
            if (watcher != null) {
                watcher.close();
            }
        } catch (IOException ignored) {
            // closing anyway
        }
        if (thread != null) {
            thread.interrupt();
        }
    }
}
