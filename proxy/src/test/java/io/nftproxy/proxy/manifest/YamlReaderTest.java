package io.nftproxy.proxy.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The fast YAML reader against the reference (snakeyaml-engine's parser): for every form a
 * manifest may take, both give the same trees, and the forms the fast reader takes are read by it
 * (no fallback), while the rarer ones are handed over and still read right.
 */
class YamlReaderTest {

    /** Forms the fast reader must read itself. */
    static Stream<Arguments> fastForms() {
        return Stream.of(
                Arguments.of("block mapping", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: shop\n"),
                Arguments.of("nested sequences of mappings", """
                        spec:
                          ports:
                          - name: http
                            port: 80
                            protocol: TCP
                          - name: https
                            port: 443
                          clusterIPs:
                            - 10.96.0.10
                            - fd00::10
                        """),
                Arguments.of("sequence at its key's indentation", "a:\n- x\n- y\nb: z\n"),
                Arguments.of("flow style", "metadata: {name: web, labels: {app: web, tier: \"front\"}}\nports: [{port: 80}, {port: 81, name: b}]\n"),
                Arguments.of("flow over several lines", "ports: [\n  {port: 80,\n   name: a},\n  {port: 81}\n]\nx: 1\n"),
                Arguments.of("JSON", "{\"kind\": \"Service\", \"spec\": {\"ports\": [{\"port\": 80}], \"clusterIP\": null}}\n"),
                Arguments.of("quoted scalars", "a: \"80\"\nb: 'it''s'\nc: \"x # y: z\"\nd: ''\ne: \"\"\n"),
                Arguments.of("comments everywhere", "# head\na: 1 # trailing\n# between\nb:   # before block\n  c: d#not-a-comment\n  # inside\n  e: \"x # y\"\n"),
                Arguments.of("null forms", "a:\nb: ~\nc: null\nd: Null\ne: NULL\nf: 'null'\ng: [~, null, '~']\n"),
                Arguments.of("merge keys", "labels:\n  <<: {app: web, tier: front}\n  tier: back\nmore:\n  <<: [{a: 1}, {extra: x}]\n  own: 1\n"),
                Arguments.of("literal block scalars", "a: |\n  line one\n    indented\n\n  after blank\nb: |-\n  stripped\nc: |\n\n  leading blank\nd: x\n"),
                Arguments.of("values with colons and hashes", "url: http://example.com:8080/a#b\ntime: 2024-01-01T10:00:00Z\nimage: repo/x:1.2\nk: a:b\n"),
                Arguments.of("keys with spaces and quotes", "\"quoted key\": 1\n'single': 2\nplain key: 3\n"),
                Arguments.of("compact nested sequence", "a:\n- - 1\n  - 2\n- - 3\n"),
                Arguments.of("empty collections", "a: {}\nb: []\nc: [ ]\n"),
                Arguments.of("scalar on the next line", "a:\n  value\nb: 1\n"),
                Arguments.of("sequence item on the next line", "a:\n-\n  b: 1\n- c\n"),
                Arguments.of("numbers and booleans stay text", "port: 80\nready: true\nratio: 1.5\nneg: -3\nhex: 0x1F\nyes: yes\n"),
                Arguments.of("CRLF line ends", "a: 1\r\nb:\r\n  c: 2\r\n"),
                Arguments.of("byte order mark", "\uFEFFa: 1\n"),
                Arguments.of("several documents", "a: 1\n---\nb: 2\n--- # comment\nc: 3\n...\n---\n# only a comment\n---\nd: 4\n"),
                Arguments.of("a List kind", """
                        apiVersion: v1
                        kind: List
                        items:
                        - apiVersion: v1
                          kind: Service
                          metadata: {name: a}
                        - apiVersion: v1
                          kind: Service
                          metadata: {name: b}
                        """),
                Arguments.of("deep indentation changes", "a:\n    b:\n          c: 1\n    d: 2\ne: 3\n"));
    }

    /** Forms the fast reader hands to the reference reader. */
    static Stream<Arguments> referenceForms() {
        return Stream.of(
                Arguments.of("folded block scalar", "a: >\n  folded\n  text\n\n  para\nb: 1\n"),
                Arguments.of("keep chomping", "a: |+\n  kept\n\nb: 1\n"),
                Arguments.of("indentation indicator", "a: |2\n   three spaces\nb: 1\n"),
                Arguments.of("tags", "a: !!str 80\nb: !!int \"80\"\n"),
                Arguments.of("plain scalar over several lines", "a: one\n  two\n  three\nb: 1\n"),
                Arguments.of("double-quoted over several lines", "a: \"one\n  two\"\nb: 1\n"),
                Arguments.of("explicit key", "? a\n: 1\n"),
                Arguments.of("directive", "%YAML 1.2\n---\na: 1\n"),
                Arguments.of("a comment before a directive", "# made by hand\n%YAML 1.2\n---\na: 1\n"),
                Arguments.of("content on the document marker", "--- {a: 1}\n--- [b]\n"),
                Arguments.of("anchor on an implicit key", "&k a: 1\n"),
                // Where readers have disagreed (the differential fuzz test found these), the reference decides:
                Arguments.of("escapes", "c: \"tab\\there \\u00e9 \\\" \\\\ \\x41\"\n"),
                Arguments.of("anchors and aliases", "base: &b\n  app: web\n  tier: front\nother: *b\nlist: &l [1, 2]\nagain: *l\nv: &s text\nw: *s\n"),
                Arguments.of("merge keys from anchors", "base: &b {app: web, tier: front}\nlabels:\n  <<: *b\n  tier: back\n"),
                Arguments.of("tabs after values", "a: 1\t\nb: x\t# c\n"));
    }

    /** Invalid YAML the fast reader once took with a meaning of its own (issue #21): refused now, as the reference refuses it. */
    static Stream<Arguments> invalidForms() {
        return Stream.of(
                Arguments.of("a sequence on its key's line", "spec:\n  clusterIPs: - 10.96.0.10\n"),
                Arguments.of("a key beginning with an indicator", "a: 1\n,b: 2\n"),
                Arguments.of("a key beginning with '@'", "@a: 1\n"),
                Arguments.of("a flow key and its colon on two lines", "- {ips\n :[a]}\n"),
                Arguments.of("a tab after the document marker", "a: 1\n---\t\nb: 2\n"),
                Arguments.of("a '-' alone as a value in flow", "- {port: 80, repeat: -, src: a}\n"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidForms")
    void invalidFormsAreRefusedAsTheReferenceRefusesThem(String name, String text) {
        assertThrows(SyntaxException.class, () -> reference(text), name + ": the reference refuses it");
        assertThrows(SyntaxException.class, () -> Yaml.documents(text), name);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fastForms")
    void fastReaderReadsTheCommonFormsLikeTheReference(String name, String text) {
        long before = Yaml.fallbacks();
        List<Object> fast = Yaml.documents(text);
        assertEquals(before, Yaml.fallbacks(), name + ": the fast reader handed the document over");
        assertEquals(reference(text), fast, name);
        assertTrue(!fast.isEmpty(), name);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("referenceForms")
    void rarerFormsAreHandedToTheReferenceAndStillRead(String name, String text) {
        long before = Yaml.fallbacks();
        List<Object> read = Yaml.documents(text);
        assertTrue(Yaml.fallbacks() > before, name + ": expected the reference reader");
        assertEquals(reference(text), read, name);
    }

    @Test
    void valuesAreWhatKubernetesMeans() {
        List<Object> docs = Yaml.documents(
                "metadata: {name: web}\nspec:\n  ports:\n  - port: \"80\"\n    name: http\n  clusterIP: None\n  x: ~\n"
                        + "---\nlabels:\n  <<: {a: 1, b: 2}\n  b: 3\n");
        Map<?, ?> spec = (Map<?, ?>) ((Map<?, ?>) docs.get(0)).get("spec");
        Map<?, ?> port = (Map<?, ?>) ((List<?>) spec.get("ports")).get(0);
        assertEquals("80", port.get("port"));
        assertEquals("None", spec.get("clusterIP"));
        assertTrue(spec.containsKey("x") && spec.get("x") == null);
        assertEquals(Map.of("a", "1", "b", "3"), ((Map<?, ?>) docs.get(1)).get("labels"));
    }

    @Test
    void literalBlockScalarKeepsItsLines() {
        Map<?, ?> m = (Map<?, ?>) Yaml.documents("a: |\n  x\n    y\n\n  z\nb: |-\n  s\n").get(0);
        assertEquals("x\n  y\n\nz\n", m.get("a"));
        assertEquals("s", m.get("b"));
    }

    @Test
    void badDocumentsAreErrorsWithTheLine() {
        SyntaxException e = assertThrows(SyntaxException.class, () -> Yaml.documents("a: 1\n---\nb: [1, 2\nc: 3\n"));
        assertTrue(e.getMessage().contains("line"), e.getMessage());
        SyntaxException dup = assertThrows(SyntaxException.class, () -> Yaml.documents("a: 1\nb: 2\na: 3\n"));
        assertTrue(dup.getMessage().contains("duplicate key 'a'"), dup.getMessage());
        assertThrows(SyntaxException.class, () -> Yaml.documents("a: *missing\n"));
        assertThrows(SyntaxException.class, () -> Yaml.documents("a: b: c\n"));
        assertThrows(SyntaxException.class, () -> Yaml.documents("a:\n  - x\n  y: 1\n"));
    }

    @Test
    void jsonGivesTheSameTreeAsYaml() {
        String json = "{\"kind\":\"Service\",\"metadata\":{\"name\":\"web\",\"labels\":{\"a\":\"b\"}},"
                + "\"spec\":{\"ports\":[{\"port\":80,\"name\":\"http\"}],\"clusterIP\":null,\"flag\":true}}";
        String yaml = "kind: Service\nmetadata:\n  name: web\n  labels: {a: b}\nspec:\n  ports:\n  - port: 80\n"
                + "    name: http\n  clusterIP: null\n  flag: true\n";
        assertEquals(Yaml.documents(yaml), Json.documents(json));
        assertEquals(2, Json.documents(json + "\n" + json).size());
        assertThrows(SyntaxException.class, () -> Json.documents("{\"a\": 1, \"a\": 2}"));
    }

    /**
     * Random trees written in random styles (block and flow, plain and quoted, comments between
     * lines) read back as the same trees by both readers. The seed is in the failure message.
     */
    @Test
    void randomTreesReadBackTheSame() {
        long seed = Long.getLong("nftproxy.seed", System.nanoTime());
        Random rnd = new Random(seed);
        long before = Yaml.fallbacks();
        for (int i = 0; i < 3000; i++) {
            Map<String, Object> tree = randomMap(rnd, 0);
            StringBuilder sb = new StringBuilder();
            writeBlockMap(sb, tree, 0, rnd);
            String text = sb.toString();
            String why = "seed " + seed + ", case " + i + ":\n" + text;
            assertEquals(List.of(tree), Yaml.documents(text), why);
            assertEquals(List.of(tree), reference(text), why);
        }
        assertEquals(before, Yaml.fallbacks(), "seed " + seed + ": random manifests should not need the reference reader");
    }

    private static List<Object> reference(String text) {
        String t = text.startsWith("\uFEFF") ? text.substring(1) : text;
        List<Object> out = new ArrayList<>();
        for (Object d : EventYaml.documents(t, Integer.MAX_VALUE)) {
            if (d != Yaml.EMPTY && d != null) {
                out.add(d);
            }
        }
        return out;
    }

    // ---- a random writer: trees of maps, lists, strings and nulls ----

    private static final String[] WORDS = {"web", "80", "10.96.0.1", "fd00::1", "a b", "x:y", "true", "-1", "ünï",
        "it's", "say \"hi\"", "#tag", "a #b", "", "null", "~", "k8s.io/name", "[x]", "{y}", "a,b", "- x", ": y", "&a", "*b",
        "!t", "|", ">", "%p", "@q", "`r"};

    private static Map<String, Object> randomMap(Random rnd, int depth) {
        Map<String, Object> m = new LinkedHashMap<>();
        int n = 1 + rnd.nextInt(4);
        for (int i = 0; i < n; i++) {
            m.put("k" + i + (rnd.nextInt(5) == 0 ? " x" : ""), randomValue(rnd, depth + 1));
        }
        return m;
    }

    private static Object randomValue(Random rnd, int depth) {
        int r = rnd.nextInt(depth > 3 ? 2 : 5);
        switch (r) {
            case 0:
                return WORDS[rnd.nextInt(WORDS.length)];
            case 1:
                return rnd.nextInt(6) == 0 ? null : "v" + rnd.nextInt(1000);
            case 2:
                return randomMap(rnd, depth);
            default:
                List<Object> l = new ArrayList<>();
                int n = rnd.nextInt(4);
                for (int i = 0; i < n; i++) {
                    l.add(randomValue(rnd, depth + 1));
                }
                return l;
        }
    }

    private static void indent(StringBuilder sb, int n) {
        sb.append(" ".repeat(n));
    }

    private static void writeBlockMap(StringBuilder sb, Map<String, Object> m, int ind, Random rnd) {
        boolean first = true;
        for (Map.Entry<String, Object> e : m.entrySet()) {
            if (!first) {
                if (rnd.nextInt(8) == 0) {
                    indent(sb, rnd.nextInt(ind + 3));
                    sb.append("# comment\n");
                }
                indent(sb, ind);
            }
            first = false;
            sb.append(scalar(e.getKey(), rnd, false)).append(':');
            writeValue(sb, e.getValue(), ind, rnd, true);
        }
    }

    /** The value after "key:" or "-", then the line break. */
    private static void writeValue(StringBuilder sb, Object v, int ind, Random rnd, boolean inMap) {
        if (v instanceof Map<?, ?> m && !m.isEmpty() && rnd.nextInt(3) > 0) {
            @SuppressWarnings("unchecked")
            Map<String, Object> mm = (Map<String, Object>) m;
            if (!inMap && rnd.nextBoolean()) {
                sb.append(' '); // compact: "- key: v" with the mapping at the item's column
                writeBlockMap(sb, mm, ind + 2, rnd);
                return;
            }
            sb.append(rnd.nextInt(4) == 0 ? "  # c\n" : "\n");
            indent(sb, ind + 2);
            writeBlockMap(sb, mm, ind + 2, rnd);
        } else if (v instanceof List<?> l && !l.isEmpty() && rnd.nextInt(3) > 0) {
            sb.append('\n');
            int at = inMap && rnd.nextBoolean() ? ind : ind + 2; // "key:\n- a" or indented
            for (Object item : l) {
                indent(sb, at);
                sb.append('-');
                writeValue(sb, item, at, rnd, false);
            }
        } else {
            sb.append(' ').append(flow(v, rnd));
            sb.append(rnd.nextInt(6) == 0 ? " # note\n" : "\n");
        }
    }

    private static String flow(Object v, Random rnd) {
        if (v instanceof Map<?, ?> m) {
            StringBuilder sb = new StringBuilder("{");
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                sb.append(first ? "" : ", ").append(scalar((String) e.getKey(), rnd, true)).append(": ")
                        .append(flow(e.getValue(), rnd));
                first = false;
            }
            return sb.append('}').toString();
        }
        if (v instanceof List<?> l) {
            StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < l.size(); i++) {
                sb.append(i == 0 ? "" : ", ").append(flow(l.get(i), rnd));
            }
            return sb.append(']').toString();
        }
        return v == null ? (rnd.nextBoolean() ? "null" : "~") : scalar((String) v, rnd, true);
    }

    /** A scalar written plain when that keeps its meaning (and by chance), else quoted. */
    private static String scalar(String s, Random rnd, boolean inFlow) {
        boolean plainOk = !s.isEmpty() && !s.equals("null") && !s.equals("~") && "-?:,[]{}#&*!|>'\"%@`".indexOf(s.charAt(0)) < 0
                && !s.contains(": ") && !s.contains(" #") && !s.endsWith(":") && !s.startsWith(" ") && !s.endsWith(" ")
                && !(inFlow && (s.contains(",") || s.contains("[") || s.contains("]") || s.contains("{") || s.contains("}")));
        if (plainOk && rnd.nextInt(3) > 0) {
            return s;
        }
        // Escapes are the reference reader's: what needs one is single-quoted.
        if (rnd.nextBoolean() || s.contains("\\") || s.contains("\"")) {
            return "'" + s.replace("'", "''") + "'";
        }
        return "\"" + s + "\"";
    }
}
