package io.nftproxy.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The layers the packages show, read from the sources: which package's classes each package's
 * code names (an import or a qualified name; not its comments), against the graph written here. Data flows one
 * way (source → model → plan → render → sync → the kernel; the servers, the counters, the trace
 * and the command line around them): a class that names a package its layer may not reach fails
 * here with the file and the name. A change of the graph is a change of this table, made on
 * purpose. (README, "Layout of the code".)
 */
class PackageLayersTest {
    private static final Path MAIN = Path.of("src/main/java/io/nftproxy/proxy");

    /** Each package, and the packages of this module its classes may name. */
    private static final Map<String, Set<String>> MAY_NAME = Map.ofEntries(
            Map.entry("model", Set.of()),
            Map.entry("events", Set.of()),
            Map.entry("http", Set.of()),
            Map.entry("manifest", Set.of()),
            Map.entry("config", Set.of("model")),
            Map.entry("topology", Set.of("model")),
            Map.entry("source", Set.of("events", "manifest", "model")),
            Map.entry("plan", Set.of("config", "model", "topology")),
            Map.entry("render", Set.of("config", "model", "plan")),
            Map.entry("sync", Set.of("config", "model", "plan", "render", "source")),
            Map.entry("iptables", Set.of("config", "model", "plan", "render", "sync")),
            Map.entry("nodesetup", Set.of("config", "iptables")),
            Map.entry("counters", Set.of("model", "render", "source", "sync")),
            Map.entry("trace", Set.of("model", "render", "sync")),
            Map.entry("metrics", Set.of("config", "http", "model", "source", "sync", "topology")),
            Map.entry("health", Set.of("config", "events", "http", "model", "nodesetup", "topology")),
            Map.entry("server", Set.of("config", "counters", "events", "health", "http", "iptables", "metrics", "render", "source",
                    "sync")),
            Map.entry("cli", Set.of("config", "events", "iptables", "metrics", "model", "nodesetup", "render", "server", "source",
                    "sync", "trace")));

    /**
     * What the commit side may name of the renderer: its entry point and the values it hands
     * out. The layout (names, trees, what a commit keeps for crossing packets) stays behind
     * {@code NftRenderer}, so that sync never asks the renderer's internals.
     */
    private static final Map<String, Set<String>> RENDER_API = Map.of(
            "sync", Set.of("NftRenderer", "Fragment", "DesiredChain", "RenderFailure"),
            "iptables", Set.of("RenderFailure"));

    private static final Pattern NAMED = Pattern.compile("io\\.nftproxy\\.proxy\\.([a-z]+)\\.([A-Z][A-Za-z0-9]*)");

    /** Per package, per named class "package.Class", the files that name it. */
    private static final Map<String, Map<String, Set<String>>> NAMES = new TreeMap<>();

    @BeforeAll
    static void read() throws IOException {
        try (Stream<Path> files = Files.walk(MAIN)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                Path rel = MAIN.relativize(f);
                if (rel.getNameCount() < 2) {
                    continue;
                }
                String pkg = rel.getName(0).toString();
                // what the code names: comments may point anywhere
                String code = Files.readString(f).replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\n]*", "");
                Matcher m = NAMED.matcher(code);
                while (m.find()) {
                    if (!m.group(1).equals(pkg)) {
                        NAMES.computeIfAbsent(pkg, k -> new TreeMap<>())
                                .computeIfAbsent(m.group(1) + "." + m.group(2), k -> new TreeSet<>()).add(rel.toString());
                    }
                }
            }
        }
    }

    @Test
    void everyPackageNamesOnlyTheLayersItMay() throws IOException {
        try (Stream<Path> dirs = Files.list(MAIN)) {
            assertEquals(new TreeSet<>(MAY_NAME.keySet()), dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString())
                    .collect(java.util.stream.Collectors.toCollection(TreeSet::new)), "every package placed in the table");
        }
        List<String> wrong = new ArrayList<>();
        NAMES.forEach((pkg, named) -> {
            Set<String> may = MAY_NAME.get(pkg);
            if (may == null) {
                wrong.add(pkg + ": a package this table does not place");
                return;
            }
            named.forEach((cls, files) -> {
                if (!may.contains(cls.substring(0, cls.indexOf('.')))) {
                    wrong.add(files + " names " + cls);
                }
            });
        });
        assertEquals(List.of(), wrong);
    }

    @Test
    void theCommitSideNamesOnlyTheRenderersEntryPoint() {
        List<String> wrong = new ArrayList<>();
        RENDER_API.forEach((pkg, api) -> NAMES.getOrDefault(pkg, Map.of()).forEach((cls, files) -> {
            if (cls.startsWith("render.") && !api.contains(cls.substring("render.".length()))) {
                wrong.add(files + " names " + cls);
            }
        }));
        assertEquals(List.of(), wrong);
        assertTrue(NAMES.get("sync").containsKey("render.NftRenderer"), "the sync reads no renderer at all? " + NAMES.get("sync"));
    }

    /** The table itself: no package reaches back to one that reaches it. */
    @Test
    void theLayersHaveNoCycle() {
        for (String start : MAY_NAME.keySet()) {
            Set<String> seen = new HashSet<>();
            List<String> todo = new ArrayList<>(MAY_NAME.get(start));
            while (!todo.isEmpty()) {
                String p = todo.remove(todo.size() - 1);
                assertTrue(!p.equals(start), start + " reaches itself");
                if (seen.add(p)) {
                    todo.addAll(MAY_NAME.getOrDefault(p, Set.of()));
                }
            }
        }
    }
}
