package io.nftproxy.proxy.source;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.proxy.manifest.Json;
import io.nftproxy.proxy.manifest.SyntaxException;
import io.nftproxy.proxy.manifest.Yaml;

/**
 * A directory of Kubernetes manifests (YAML or JSON, several documents per file) as the source of
 * Services, EndpointSlices and Nodes. Each file's objects are converted to the compact model as
 * the file is read, and the directory is watched: a file added, changed or removed is read again
 * alone, and only the objects that changed reach the store. A file that does not parse is
 * reported by name and its last good content stays in effect; the other files are unaffected.
 */
public final class ManifestSource implements Source {
    private static final Logger LOG = LoggerFactory.getLogger(ManifestSource.class);
    /** A larger file is refused unread. */
    public static final long MAX_FILE_BYTES = 64L << 20;
    /** How long a new parse error waits for the writer to finish before it is logged. */
    private static final long SETTLE_MILLIS = 250;

    private final Path dir;
    private final ObjectStore store;
    private final Map<Path, FileState> files = new HashMap<>();
    /**
     * Which file defines each object, and what it says. Nearly every object is in one file; those
     * that several files define are in {@link #contested}, where the last in name order wins. (A
     * map of files per object took 88 bytes an object: 18 MB at 100,000 services.)
     */
    private final Map<ObjectKey, Definition> definitions = new HashMap<>();
    private final Map<ObjectKey, TreeMap<Path, KubeObject>> contested = new HashMap<>();
    /** Parse errors not yet logged: the writer may still be writing. */
    private final Map<Path, String> unlogged = new LinkedHashMap<>();
    private final AtomicLong filesRead = new AtomicLong();
    private final AtomicLong rescans = new AtomicLong();
    private WatchService watcher;
    private Thread thread;
    private volatile boolean closed;

    /** The one file that defines an object, and the object as it says. */
    private record Definition(Path file, KubeObject object) {
    }

    /** What a file gave when last read: its stat, content hash, objects, and its error (null when it parsed). */
    private record FileState(long size, FileTime modified, long hash, List<KubeObject> objects, String error) {
    }

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
            register();
        }
        rescan();
        if (watch) {
            thread = new Thread(this::watchLoop, "manifests-" + dir.getFileName());
            thread.setDaemon(true);
            thread.start();
        }
    }

    @Override
    public CompletableFuture<Void> listAndWatch(boolean watch) throws IOException {
        start(watch);
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public String where() {
        return "manifests in " + dir;
    }

    @Override
    public int unusable() {
        return (int) files.values().stream().filter(f -> f.error() != null).count();
    }

    /** How many times a file's content was read (a rescan reads only files whose size or time changed). */
    public long filesRead() {
        return filesRead.get();
    }

    /** How many times the whole directory was listed. */
    public long rescans() {
        return rescans.get();
    }

    private void register() throws IOException {
        dir.register(watcher, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY,
                StandardWatchEventKinds.ENTRY_DELETE);
    }

    private static boolean isManifest(String name) {
        return !name.startsWith(".") && (name.endsWith(".yaml") || name.endsWith(".yml") || name.endsWith(".json"));
    }

    private void watchLoop() {
        try {
            while (!closed) {
                boolean settling;
                synchronized (this) {
                    settling = !unlogged.isEmpty();
                }
                WatchKey k = settling ? watcher.poll(SETTLE_MILLIS, TimeUnit.MILLISECONDS) : watcher.take();
                if (k == null) {
                    logUnlogged(); // the writer is done: what still does not parse is an error
                    continue;
                }
                Set<Path> changed = new LinkedHashSet<>();
                boolean rescan = false;
                boolean gone = false;
                // Take every event already queued, without waiting for more: a burst becomes one
                // round, and a single change is applied at once.
                while (k != null) {
                    for (WatchEvent<?> ev : k.pollEvents()) {
                        if (ev.kind() == StandardWatchEventKinds.OVERFLOW) {
                            rescan = true; // events were lost: look at everything
                            continue;
                        }
                        String name = ev.context().toString();
                        if (isManifest(name)) {
                            changed.add(dir.resolve(name));
                        } else if (name.startsWith("..")) {
                            rescan = true; // a ConfigMap volume swapped its ..data link
                        }
                    }
                    if (!k.reset()) {
                        gone = true;
                    }
                    k = watcher.poll();
                }
                if (rescan && !gone) {
                    rescan();
                } else {
                    refresh(changed); // with the directory gone, its files' deletions still apply
                }
                if (gone) {
                    awaitDirectory();
                }
            }
        } catch (InterruptedException | ClosedWatchServiceException e) {
            // closing
        }
    }

    /** The directory was removed: keep what we have, look for it to come back, then read it again. */
    private void awaitDirectory() throws InterruptedException {
        LOG.warn("manifest directory {} was removed; waiting for it to come back", dir);
        while (!closed) {
            if (Files.isDirectory(dir)) {
                try {
                    register();
                    LOG.info("manifest directory {} is back; reading it again", dir);
                    rescan();
                    return;
                } catch (IOException e) {
                    LOG.debug("cannot watch {} yet: {}", dir, e.getMessage());
                }
            }
            Thread.sleep(500); // polling a path that does not exist: nothing to watch for it
        }
    }

    private synchronized void logUnlogged() {
        unlogged.forEach((f, msg) -> LOG.error("manifest {} {}{}", f, msg, consequence(f)));
        unlogged.clear();
    }

    /**
     * What a file's refusal means for what is served: its last good objects stay, or, when it
     * has none (new, or refused since the process started), nothing of it is served, and rules a
     * process before this one programmed from it are gone.
     */
    private String consequence(Path f) {
        FileState st = files.get(f);
        return st != null && !st.objects().isEmpty() ? ", keeping its last good content"
                : "; it has no last good content: none of its objects is served until it is fixed";
    }

    /** Reads again the files named (events), whatever their stat says. */
    private synchronized void refresh(Set<Path> changed) {
        for (Path f : changed) {
            read(f, true);
        }
    }

    /** Lists the directory: forgets removed files, reads new ones and those whose size or time changed. */
    public synchronized void rescan() {
        rescans.incrementAndGet();
        List<Path> present = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.filter(p -> isManifest(p.getFileName().toString())).sorted().forEach(present::add);
        } catch (IOException e) {
            LOG.error("cannot list manifest directory {}: {}", dir, e.getMessage());
            return;
        }
        Set<Path> presentSet = new HashSet<>(present);
        for (Path f : new ArrayList<>(files.keySet())) {
            if (!presentSet.contains(f)) {
                forget(f);
            }
        }
        for (Path f : present) {
            read(f, false);
        }
    }

    /** Reads one file if it changed ({@code force}: even when its stat did not) and applies its objects. */
    private void read(Path f, boolean force) {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(f, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            forget(f);
            return;
        } catch (IOException e) {
            fail(f, null, null, "cannot be read: " + e.getMessage());
            return;
        }
        if (!attrs.isRegularFile()) {
            forget(f);
            return;
        }
        FileState old = files.get(f);
        if (!force && old != null && old.size() == attrs.size() && old.modified().equals(attrs.lastModifiedTime())) {
            return;
        }
        if (attrs.size() > MAX_FILE_BYTES) {
            fail(f, attrs, null, "is " + (attrs.size() >> 20) + " MiB; the limit is " + (MAX_FILE_BYTES >> 20) + " MiB");
            return;
        }
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(f);
        } catch (NoSuchFileException e) {
            forget(f);
            return;
        } catch (IOException e) {
            fail(f, attrs, null, "cannot be read: " + e.getMessage());
            return;
        }
        filesRead.incrementAndGet();
        long hash = hash(bytes);
        long length = bytes.length;
        if (old != null && old.error() == null && old.hash() == hash && old.size() == length) {
            files.put(f, new FileState(bytes.length, attrs.lastModifiedTime(), hash, old.objects(), null));
            return; // touched, not changed
        }
        List<String> problems = new ArrayList<>();
        List<KubeObject> objects = new ArrayList<>();
        try {
            String text = new String(bytes, StandardCharsets.UTF_8);
            bytes = null; // a large file: keep one copy of it alive, not two
            // Each document is converted as soon as it is read: its tree is garbage right away.
            Consumer<Object> convert = doc -> objects.addAll(KubeModel.objects(doc, store.selection(), problems::add));
            if (f.getFileName().toString().endsWith(".json")) {
                Json.documents(text, convert);
            } else {
                Yaml.documents(text, convert);
            }
        } catch (SyntaxException e) {
            String msg = e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
            fail(f, attrs, hash, "does not parse: " + msg);
            return;
        }
        unlogged.remove(f);
        apply(f, old == null ? List.of() : old.objects(), objects);
        files.put(f, new FileState(length, attrs.lastModifiedTime(), hash, List.copyOf(objects), null));
        String had = old == null ? null : old.error();
        String now = problems.isEmpty() ? null : String.join("; ", problems);
        if (now != null && !now.equals(had)) {
            LOG.error("manifest {}: {}", f, now);
        }
        store.reportSourceError(label(f), now);
    }

    /** A file that cannot be used now: its last good objects stay; the error is reported (and logged once settled). */
    private void fail(Path f, BasicFileAttributes attrs, Long hash, String msg) {
        FileState old = files.get(f);
        List<KubeObject> kept = old == null ? List.of() : old.objects();
        boolean isNew = old == null || !msg.equals(old.error());
        files.put(f, new FileState(attrs == null ? -1 : attrs.size(), attrs == null ? FileTime.fromMillis(0)
                : attrs.lastModifiedTime(), hash == null ? 0 : hash, kept, msg));
        store.reportSourceError(label(f), msg);
        if (isNew) {
            if (thread == null) {
                LOG.error("manifest {} {}{}", f, msg, consequence(f));
            } else {
                unlogged.put(f, msg);
            }
        }
    }

    private void forget(Path f) {
        FileState old = files.remove(f);
        unlogged.remove(f);
        if (old != null) {
            apply(f, old.objects(), List.of());
            store.reportSourceError(label(f), null);
        }
    }

    private static String label(Path f) {
        return "file " + f.getFileName();
    }

    /** Moves the store from a file's old objects to its new ones, touching only what differs. */
    private void apply(Path f, List<KubeObject> before, List<KubeObject> after) {
        Map<ObjectKey, KubeObject> was = new LinkedHashMap<>();
        before.forEach(o -> was.put(o.key(), o));
        Map<ObjectKey, KubeObject> now = new LinkedHashMap<>();
        after.forEach(o -> now.put(o.key(), o)); // the same object twice in a file: the later one
        for (Map.Entry<ObjectKey, KubeObject> e : was.entrySet()) {
            if (!now.containsKey(e.getKey())) {
                define(e.getKey(), f, null);
            }
        }
        for (Map.Entry<ObjectKey, KubeObject> e : now.entrySet()) {
            if (!e.getValue().equals(was.get(e.getKey()))) {
                define(e.getKey(), f, e.getValue());
            }
        }
    }

    private void define(ObjectKey key, Path f, KubeObject o) {
        TreeMap<Path, KubeObject> several = contested.get(key);
        if (several == null) {
            Definition one = definitions.get(key);
            if (one == null || one.file().equals(f)) {
                if (o == null) {
                    definitions.remove(key);
                } else {
                    definitions.put(key, new Definition(f, o));
                }
            } else if (o != null) {
                several = new TreeMap<>(Map.of(one.file(), one.object(), f, o));
                definitions.remove(key);
                contested.put(key, several);
            }
        } else {
            if (o == null) {
                several.remove(f);
            } else {
                several.put(f, o);
            }
            if (several.size() == 1) {
                contested.remove(key);
                definitions.put(key, new Definition(several.firstKey(), several.firstEntry().getValue()));
                several = null;
            }
        }
        KubeObject wins = several != null ? several.lastEntry().getValue()
                : definitions.containsKey(key) ? definitions.get(key).object() : null;
        if (wins == null) {
            store.remove(key);
        } else {
            store.put(wins); // equal to what the store holds: no change
        }
    }

    /** 64 bits of content hash: a file rewritten with the same bytes is not read as a change. */
    private static long hash(byte[] bytes) {
        CRC32C a = new CRC32C();
        a.update(bytes);
        CRC32 b = new CRC32();
        b.update(bytes);
        return a.getValue() << 32 | b.getValue();
    }

    @Override
    public void close() {
        closed = true;
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
