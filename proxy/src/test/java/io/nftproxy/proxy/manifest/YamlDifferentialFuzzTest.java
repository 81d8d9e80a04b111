package io.nftproxy.proxy.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The fast reader's promise, enforced: it may hand a document to the reference reader (or refuse
 * it), but a document it accepts reads as the reference (snakeyaml-engine) reads it, tree for
 * tree. Seeded mutations (a character inserted, deleted, replaced or swapped; a line repeated) of
 * the demo's manifests and of every conformance scenario, -Dnftproxy.yamlFuzz (100,000) per run;
 * -Dnftproxy.seed=N replays a run. Nothing but a {@link SyntaxException} may come out of the
 * reader.
 */
class YamlDifferentialFuzzTest {
    /** YAML's indicators, whitespace and line ends weigh most: they are where readers differ. */
    private static final String ALPHABET = "-:#{}[],&*!|>'\"%@`?~ \t\n\n\n  ab0.=\\/";

    static List<String> corpus() throws Exception {
        List<String> texts = new ArrayList<>();
        texts.add(Files.readString(Path.of("src/main/resources/io/nftproxy/demo/services.yaml"), StandardCharsets.UTF_8));
        try (Stream<Path> files = Files.list(Path.of("..", "conformance", "scenarios"))) {
            for (Path f : files.sorted().toList()) {
                String text = Files.readString(f, StandardCharsets.UTF_8);
                texts.add(text);
                for (Object doc : Yaml.referenceDocuments(text)) {
                    if (doc instanceof Map<?, ?> m && m.get("manifests") instanceof String manifests) {
                        texts.add(manifests);
                    }
                }
            }
        }
        return texts;
    }

    static String mutate(String t, Random r) {
        StringBuilder sb = new StringBuilder(t);
        int edits = 1 + r.nextInt(2);
        for (int e = 0; e < edits && sb.length() > 1; e++) {
            int at = r.nextInt(sb.length());
            char c = ALPHABET.charAt(r.nextInt(ALPHABET.length()));
            switch (r.nextInt(5)) {
                case 0 -> sb.insert(at, c);
                case 1 -> sb.deleteCharAt(at);
                case 2 -> sb.setCharAt(at, c);
                case 3 -> {
                    if (at + 1 < sb.length()) {
                        char a = sb.charAt(at);
                        sb.setCharAt(at, sb.charAt(at + 1));
                        sb.setCharAt(at + 1, a);
                    }
                }
                default -> {
                    int start = sb.lastIndexOf("\n", at) + 1;
                    int end = sb.indexOf("\n", at);
                    end = end < 0 ? sb.length() : end + 1;
                    sb.insert(start, sb.substring(start, end));
                }
            }
        }
        return sb.toString();
    }

    /** The reference's reading: its documents, or the error it gives. */
    static Object reference(String text) {
        try {
            return Yaml.referenceDocuments(text);
        } catch (SyntaxException e) {
            return e;
        }
    }

    @Test
    void whatTheFastReaderAcceptsReadsAsTheReferenceReadsIt() throws Exception {
        long seed = Long.getLong("nftproxy.seed", new Random().nextLong());
        int runs = Integer.getInteger("nftproxy.yamlFuzz", 100_000);
        System.out.println("YAML differential fuzz: " + runs + " mutations, seed " + seed + " (replay: -Dnftproxy.seed=" + seed + ")");
        List<String> corpus = corpus();
        Random r = new Random(seed);
        int accepted = 0;
        for (int i = 0; i < runs; i++) {
            String text = mutate(corpus.get(r.nextInt(corpus.size())), r);
            List<Object> fast;
            try {
                fast = Yaml.documents(text);
            } catch (SyntaxException e) {
                continue; // refusing is allowed; the reference may still have taken it
            } catch (RuntimeException e) {
                throw new AssertionError("seed " + seed + ", mutation " + i + ": the reader threw " + e + " on:\n" + text, e);
            }
            accepted++;
            Object ref = reference(text);
            if (!ref.equals(fast)) {
                assertEquals(ref, fast, "seed " + seed + ", mutation " + i + " (replay: -Dnftproxy.seed=" + seed
                        + "): the fast reader accepted what the reference reads otherwise:\n" + text);
            }
        }
        System.out.println("YAML differential fuzz: the fast reader accepted " + accepted + " of " + runs);
    }
}
