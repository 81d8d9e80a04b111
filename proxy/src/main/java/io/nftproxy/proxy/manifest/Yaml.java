package io.nftproxy.proxy.manifest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Reads a multi-document YAML text into trees: {@code Map<String, Object>} (insertion-ordered),
 * {@code List<Object>}, {@code String} and {@code null}. Scalars stay text: the caller decides
 * what a field's type is (so "80" and 80 are both a port, as Kubernetes' decoders accept).
 *
 * <p>Each document goes to {@link FastYaml}; a document it does not take goes to
 * {@link EventYaml} (snakeyaml-engine). Both apply the same rules: a plain {@code ~}, {@code null}
 * or empty scalar is null; keys are text; a duplicate key is an error; {@code <<} merges
 * mappings (as Kubernetes' YAML decoder does).
 */
public final class Yaml {
    /** The largest document read, in characters: beyond it a file is refused, not parsed. */
    public static final int MAX_DOCUMENT_CHARS = 64 << 20;

    /** An empty document (only comments, or nothing): skipped by {@link #documents}. */
    static final Object EMPTY = new Object() {
        @Override
        public String toString() {
            return "<empty document>";
        }
    };

    private Yaml() {
    }

    /** How many documents the fast reader has handed to the reference reader (for tests and profiling). */
    private static final AtomicLong FALLBACKS = new AtomicLong();

    public static long fallbacks() {
        return FALLBACKS.get();
    }

    /** The non-empty documents of {@code text}, in order; a {@link SyntaxException} names the first bad one. */
    public static List<Object> documents(String text) {
        List<Object> out = new ArrayList<>();
        documents(text, out::add);
        return out;
    }

    /**
     * Hands each non-empty document of {@code text} to {@code sink} as soon as it is read, so only
     * one document's tree is alive at a time; stops at the first bad document with a
     * {@link SyntaxException}.
     */
    public static void documents(String text, Consumer<Object> sink) {
        text = normalized(text);
        if (text.indexOf('\t') >= 0) {
            // Where a tab may separate tokens, readers disagree (snakeyaml-engine refuses places
            // YAML 1.2 allows, even after "---"): a text with a tab is the reference reader's.
            reference(text, 0).forEach(sink);
            return;
        }
        int docStart = 0;
        int docLine = 0;
        int line = 0;
        int i = 0;
        int n = text.length();
        boolean content = false; // whether the document so far has more than comments and blank lines
        while (i <= n) {
            int nl = text.indexOf('\n', i);
            int lineEnd = nl < 0 ? n : nl;
            if (lineEnd - i >= 3 && (text.startsWith("---", i) || text.startsWith("...", i))
                    && (lineEnd - i == 3 || text.charAt(i + 3) == ' ' || text.charAt(i + 3) == '\t')) {
                String rest = text.substring(i + 3, lineEnd).trim();
                if (!rest.isEmpty() && !rest.startsWith("#")) {
                    reference(text, 0).forEach(sink); // "--- value": the marker line carries content
                    return;
                }
                read(text, docStart, i, docLine, sink);
                docStart = nl < 0 ? n : nl + 1;
                docLine = line + 1;
                content = false;
            } else if (i < n && text.charAt(i) == '%' && !content) {
                reference(text, 0).forEach(sink); // directives (comments may come before them)
                return;
            } else if (!content) {
                int j = i;
                while (j < lineEnd && text.charAt(j) == ' ') {
                    j++;
                }
                content = j < lineEnd && text.charAt(j) != '#';
            }
            if (nl < 0) {
                break;
            }
            i = nl + 1;
            line++;
        }
        read(text, docStart, n, docLine, sink);
    }

    private static void read(String text, int start, int end, int firstLine, Consumer<Object> sink) {
        if (end - start > MAX_DOCUMENT_CHARS) {
            throw new SyntaxException("document at line " + (firstLine + 1) + " has " + (end - start)
                    + " characters; the limit is " + MAX_DOCUMENT_CHARS);
        }
        Object doc;
        try {
            doc = FastYaml.document(text, start, end);
        } catch (FastYaml.Unsupported e) {
            // Line numbers in the reference reader's messages count from the top of the file.
            List<Object> docs = reference("\n".repeat(firstLine) + text.substring(start, end), firstLine);
            docs.forEach(sink);
            return;
        }
        if (doc != EMPTY) {
            sink.accept(doc);
        }
    }

    /** The documents of {@code text} as the reference reader alone reads them (the fast reader's oracle in tests). */
    static List<Object> referenceDocuments(String text) {
        return reference(normalized(text), 0);
    }

    /** Without a byte order mark, and with '\n' for every line end. */
    private static String normalized(String text) {
        if (!text.isEmpty() && text.charAt(0) == '\uFEFF') {
            text = text.substring(1);
        }
        return text.indexOf('\r') >= 0 ? text.replace("\r\n", "\n").replace('\r', '\n') : text;
    }

    private static List<Object> reference(String text, int firstLine) {
        FALLBACKS.incrementAndGet();
        List<Object> docs = new ArrayList<>();
        for (Object d : EventYaml.documents(text, MAX_DOCUMENT_CHARS + firstLine + 16)) {
            if (d != EMPTY && d != null) { // an empty document ("---" then nothing) is skipped
                docs.add(d);
            }
        }
        return docs;
    }

    /** A plain scalar's value: null for the null forms, else its text. */
    static Object plain(String v) {
        return switch (v) {
            case "", "~", "null", "Null", "NULL" -> null;
            default -> v;
        };
    }

    /**
     * A mapping with merge keys: its own keys win, then each merged mapping in order (for a
     * sequence of mappings, earlier ones win).
     */
    static Map<String, Object> merge(Map<String, Object> own, List<Object> merges) {
        Map<String, Object> out = new LinkedHashMap<>(own);
        for (Object m : merges) {
            if (m instanceof Map<?, ?> map) {
                mergeOne(out, map);
            } else if (m instanceof List<?> list) {
                for (Object item : list) {
                    if (!(item instanceof Map<?, ?> map)) {
                        throw new SyntaxException("a merge key ('<<') takes mappings");
                    }
                    mergeOne(out, map);
                }
            } else {
                throw new SyntaxException("a merge key ('<<') takes a mapping or a sequence of mappings");
            }
        }
        return out;
    }

    private static void mergeOne(Map<String, Object> out, Map<?, ?> from) {
        for (Map.Entry<?, ?> e : from.entrySet()) {
            if (!out.containsKey(e.getKey())) {
                out.put((String) e.getKey(), e.getValue());
            }
        }
    }
}
