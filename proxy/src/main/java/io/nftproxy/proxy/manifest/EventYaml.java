package io.nftproxy.proxy.manifest;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.events.AliasEvent;
import org.snakeyaml.engine.v2.events.Event;
import org.snakeyaml.engine.v2.events.NodeEvent;
import org.snakeyaml.engine.v2.events.ScalarEvent;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.parser.ParserImpl;
import org.snakeyaml.engine.v2.scanner.StreamReader;

/**
 * The reference reader: snakeyaml-engine's full YAML 1.2 parser, its events turned into the same
 * tree as {@link FastYaml} builds, with the same rules for nulls, duplicate keys and merge keys.
 * Used for documents the fast reader does not take, and for the error message of a bad document.
 */
final class EventYaml {
    private EventYaml() {
    }

    /** Every document of {@code text}, in order ({@link Yaml#EMPTY} for an empty one). */
    static List<Object> documents(String text, int maxCodePoints) {
        LoadSettings settings = LoadSettings.builder().setCodePointLimit(maxCodePoints).build();
        ParserImpl parser = new ParserImpl(settings, new StreamReader(settings, text));
        List<Object> out = new ArrayList<>();
        Map<String, Object> anchors = new HashMap<>();
        Deque<Object> stack = new ArrayDeque<>(); // containers being filled; a mapping's pending key follows it
        Object[] root = new Object[1];
        boolean[] rootSet = new boolean[1];
        try {
            while (parser.hasNext()) {
                Event e = parser.next();
                switch (e.getEventId()) {
                    case DocumentStart -> {
                        anchors.clear();
                        rootSet[0] = false;
                    }
                    case DocumentEnd -> out.add(rootSet[0] ? root[0] : Yaml.EMPTY);
                    case Scalar -> {
                        ScalarEvent se = (ScalarEvent) e;
                        boolean plainUntagged = se.isPlain() && se.getTag().isEmpty();
                        Object v = plainUntagged ? Yaml.plain(se.getValue()) : se.getValue();
                        if (!stack.isEmpty() && stack.peek() instanceof PendingMap pm && pm.key == null) {
                            // A key: always the text, as written.
                            pm.key = se.getValue();
                            pm.keyIsMerge = plainUntagged && se.getValue().equals("<<");
                            anchor(anchors, se, se.getValue());
                        } else {
                            anchor(anchors, se, v);
                            add(stack, v, root, rootSet);
                        }
                    }
                    case Alias -> {
                        String name = ((AliasEvent) e).getAlias().getValue();
                        if (!anchors.containsKey(name)) {
                            throw new SyntaxException("unknown alias '" + name + "'");
                        }
                        if (!stack.isEmpty() && stack.peek() instanceof PendingMap pm && pm.key == null) {
                            throw new SyntaxException("an alias as a mapping key is not supported");
                        }
                        add(stack, anchors.get(name), root, rootSet);
                    }
                    case MappingStart -> {
                        if (!stack.isEmpty() && stack.peek() instanceof PendingMap pm && pm.key == null) {
                            throw new SyntaxException("a mapping as a mapping key is not supported");
                        }
                        stack.push(new PendingMap(((NodeEvent) e).getAnchor().map(a -> a.getValue()).orElse(null)));
                    }
                    case SequenceStart -> {
                        if (!stack.isEmpty() && stack.peek() instanceof PendingMap pm && pm.key == null) {
                            throw new SyntaxException("a sequence as a mapping key is not supported");
                        }
                        stack.push(new PendingList(((NodeEvent) e).getAnchor().map(a -> a.getValue()).orElse(null)));
                    }
                    case MappingEnd -> {
                        PendingMap pm = (PendingMap) stack.pop();
                        Map<String, Object> m = pm.merges == null ? pm.map : Yaml.merge(pm.map, pm.merges);
                        if (pm.anchor != null) {
                            anchors.put(pm.anchor, m);
                        }
                        add(stack, m, root, rootSet);
                    }
                    case SequenceEnd -> {
                        PendingList pl = (PendingList) stack.pop();
                        if (pl.anchor != null) {
                            anchors.put(pl.anchor, pl.list);
                        }
                        add(stack, pl.list, root, rootSet);
                    }
                    default -> {
                    }
                }
            }
        } catch (MarkedYamlEngineException ex) {
            // One line: what is wrong and where (snakeyaml's own message spans several lines).
            String where = ex.getProblemMark().map(m -> " at line " + (m.getLine() + 1) + ", column " + (m.getColumn() + 1))
                    .orElse("");
            String context = ex.getContext() == null ? "" : ex.getContext() + ": ";
            throw new SyntaxException(context + ex.getProblem() + where);
        } catch (YamlEngineException ex) {
            throw new SyntaxException(ex.getMessage().lines().findFirst().orElse(ex.toString()));
        }
        return out;
    }

    private static void anchor(Map<String, Object> anchors, NodeEvent e, Object v) {
        e.getAnchor().ifPresent(a -> anchors.put(a.getValue(), v));
    }

    private static void add(Deque<Object> stack, Object v, Object[] root, boolean[] rootSet) {
        if (stack.isEmpty()) {
            root[0] = v;
            rootSet[0] = true;
        } else if (stack.peek() instanceof PendingList pl) {
            pl.list.add(v);
        } else {
            PendingMap pm = (PendingMap) stack.peek();
            if (pm.keyIsMerge) {
                pm.merges = pm.merges == null ? new ArrayList<>() : pm.merges;
                pm.merges.add(v);
            } else if (pm.map.containsKey(pm.key)) {
                throw new SyntaxException("duplicate key '" + pm.key + "'");
            } else {
                pm.map.put(pm.key, v);
            }
            pm.key = null;
            pm.keyIsMerge = false;
        }
    }

    private static final class PendingMap {
        final String anchor;
        final Map<String, Object> map = new LinkedHashMap<>();
        List<Object> merges;
        String key;
        boolean keyIsMerge;

        PendingMap(String anchor) {
            this.anchor = anchor;
        }
    }

    private static final class PendingList {
        final String anchor;
        final List<Object> list = new ArrayList<>();

        PendingList(String anchor) {
            this.anchor = anchor;
        }
    }
}
