package io.nftproxy.proxy.manifest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A single-pass reader for the YAML that Kubernetes manifests are written in: block and flow
 * mappings and sequences, plain, single- and double-quoted scalars, literal block scalars,
 * comments and merge keys. It reads one document region straight into a tree of
 * {@code LinkedHashMap}, {@code ArrayList}, {@code String} and {@code null}.
 *
 * <p>Anything rarer (tags, anchors and aliases, explicit keys, folded or keep-chomped block
 * scalars, multi-line plain or quoted scalars, escapes, scalars beginning with an indicator,
 * directives; tabs are sorted out before) and anything malformed throws {@link Unsupported}, and
 * the document is read again by {@link EventYaml}, the reference reader, which also gives the
 * error message when the document is invalid. So this class may refuse, but must never accept a
 * document the reference reads otherwise: {@code YamlReaderTest} compares both readers on every
 * form, and {@code YamlDifferentialFuzzTest} on 100,000 mutated manifests a run.
 */
final class FastYaml {
    /** This reader does not handle the construct; the reference reader will. No stack trace: it is control flow. */
    static final class Unsupported extends RuntimeException {
        Unsupported(String why) {
            super(why, null, false, false);
        }
    }

    private final String s;
    private final int end;
    private int pos;
    private int lineStart;

    private FastYaml(String s, int start, int end) {
        this.s = s;
        this.end = end;
        this.pos = start;
        this.lineStart = start;
    }

    /**
     * The root of the document in {@code s[start, end)} (which starts at a line start), or
     * {@link Yaml#EMPTY} when the region holds no node.
     */
    static Object document(String s, int start, int end) {
        FastYaml r = new FastYaml(s, start, end);
        if (!r.nextContentLine()) {
            return Yaml.EMPTY;
        }
        Object root = r.node(r.col(), -1, true);
        if (r.nextContentLine()) {
            throw new Unsupported("content after the document's root node");
        }
        return root;
    }

    // ---- positions and lines ----

    private int col() {
        return pos - lineStart;
    }

    private char at(int i) {
        return i < end ? s.charAt(i) : '\n';
    }

    private boolean blankAt(int i) {
        char c = at(i);
        return c == ' ' || c == '\n' || c == '\t';
    }

    /**
     * Moves to the next character that is content (not a space, line break or comment); returns
     * false at the end. Stays put when already on content.
     */
    private boolean nextContentLine() {
        while (pos < end) {
            char c = s.charAt(pos);
            if (c == ' ') {
                pos++;
            } else if (c == '\n') {
                pos++;
                lineStart = pos;
            } else if (c == '#') {
                skipToLineEnd();
            } else if (c == '\t') {
                if (pos == lineStart || s.charAt(pos - 1) == ' ' && onlySpacesBefore()) {
                    throw new Unsupported("tab in indentation");
                }
                pos++;
            } else {
                return true;
            }
        }
        return false;
    }

    private boolean onlySpacesBefore() {
        for (int i = lineStart; i < pos; i++) {
            if (s.charAt(i) != ' ') {
                return false;
            }
        }
        return true;
    }

    private void skipToLineEnd() {
        int nl = s.indexOf('\n', pos);
        pos = nl < 0 || nl > end ? end : nl;
    }

    private void skipSpaces() {
        while (pos < end && (s.charAt(pos) == ' ' || s.charAt(pos) == '\t')) {
            pos++;
        }
    }

    /** After spaces: the line ends here (line break, comment or end of the document). */
    private boolean atLineEnd() {
        skipSpaces();
        char c = at(pos);
        return c == '\n' || c == '#' && (pos == lineStart || blankAt(pos - 1));
    }

    private void expectLineEnd() {
        if (!atLineEnd()) {
            throw new Unsupported("unexpected content after a value");
        }
    }

    // ---- block context ----

    /**
     * A node starting at the cursor, in column {@code col}, inside a parent indented {@code parent}.
     * {@code mappingHere}: whether a block mapping may start on this line (not right after "key:").
     */
    private Object node(int col, int parent, boolean mappingHere) {
        char c = s.charAt(pos);
        if (c == '-' && blankAt(pos + 1)) {
            if (!mappingHere) {
                throw new Unsupported("a sequence on its key's line"); // "key: - a" is not YAML
            }
            return blockSequence(col);
        }
        switch (c) {
            case '[', '{' -> {
                Object v = flow(parent);
                skipSpaces();
                if (at(pos) == ':') {
                    throw new Unsupported("a collection as a key");
                }
                expectLineEnd();
                return v;
            }
            case '|' -> {
                return literal(parent);
            }
            // Anchors and aliases too: readers differ on what an anchor's name may hold.
            case '>', '!', '?', '%', '@', '`', ',', ']', '}', '#', '&', '*' -> throw new Unsupported("indicator '" + c + "'");
            default -> {
            }
        }
        if (keyLine()) {
            if (!mappingHere) {
                throw new Unsupported("a mapping on its key's line");
            }
            return blockMapping(col);
        }
        if (c == '"' || c == '\'') {
            String v = c == '"' ? doubleQuoted() : singleQuoted();
            expectLineEnd();
            return v;
        }
        return plainValue(parent);
    }

    /** A node on the following lines (after "key:" or "-" with nothing else on the line), or null. */
    private Object nextLinesNode(int parent, boolean mappingValue) {
        int save = pos;
        int saveLine = lineStart;
        if (!nextContentLine()) {
            return null;
        }
        int c = col();
        if (c > parent) {
            return node(c, parent, true);
        }
        if (c == parent && mappingValue && s.charAt(pos) == '-' && blankAt(pos + 1)) {
            return blockSequence(c); // "key:\n- a\n- b": a sequence may sit at its key's indentation
        }
        pos = save;
        lineStart = saveLine;
        return null;
    }

    private List<Object> blockSequence(int indent) {
        List<Object> out = new ArrayList<>();
        while (true) {
            pos++; // the '-'
            Object item = atLineEnd() ? nextLinesNode(indent, false) : node(col(), indent, true);
            out.add(item);
            if (!nextContentLine()) {
                return out;
            }
            int c = col();
            if (c < indent) {
                return out;
            }
            if (c > indent) {
                throw new Unsupported("bad indentation in a sequence");
            }
            if (!(s.charAt(pos) == '-' && blankAt(pos + 1))) {
                return out; // the mapping around "key:\n- a" goes on
            }
        }
    }

    private Map<String, Object> blockMapping(int indent) {
        Map<String, Object> out = new LinkedHashMap<>();
        List<Object> merges = null;
        while (true) {
            boolean quoted = s.charAt(pos) == '"' || s.charAt(pos) == '\'';
            String key = key();
            Object value = atLineEnd() ? nextLinesNode(indent, true) : node(col(), indent, false);
            if (!quoted && key.equals("<<")) {
                merges = merges == null ? new ArrayList<>() : merges;
                merges.add(value);
            } else if (out.containsKey(key)) {
                throw new Unsupported("duplicate key");
            } else {
                out.put(key, value);
            }
            if (!nextContentLine()) {
                break;
            }
            int c = col();
            if (c < indent) {
                break;
            }
            if (c > indent) {
                throw new Unsupported("bad indentation in a mapping");
            }
            if (s.charAt(pos) == '-' && blankAt(pos + 1)) {
                throw new Unsupported("a sequence entry inside a mapping");
            }
            if (!keyLine()) {
                throw new Unsupported("a mapping line without a key");
            }
        }
        return merges == null ? out : Yaml.merge(out, merges);
    }

    /** Whether the line from the cursor is "key: ..." (an implicit key, plain or quoted). */
    private boolean keyLine() {
        int i = pos;
        char c = s.charAt(i);
        if (c == '{' || c == '[') {
            return false; // a collection as a key is refused where the collection is read
        }
        if (c == '"' || c == '\'') {
            i++;
            while (true) {
                char d = at(i);
                if (d == '\n') {
                    return false;
                }
                if (d == '\\' && c == '"') {
                    i += 2;
                    continue;
                }
                if (d == c) {
                    if (c == '\'' && at(i + 1) == '\'') {
                        i += 2;
                        continue;
                    }
                    break;
                }
                i++;
            }
            i++;
            while (at(i) == ' ') {
                i++;
            }
            return at(i) == ':' && blankAt(i + 1);
        }
        for (; i < end; i++) {
            char d = s.charAt(i);
            if (d == '\n') {
                return false;
            }
            if (d == ':' && blankAt(i + 1)) {
                return true;
            }
            if (d == '#' && (s.charAt(i - 1) == ' ' || s.charAt(i - 1) == '\t')) {
                return false;
            }
        }
        return false;
    }

    /** Reads "key:" (the cursor is on a key line) and leaves the cursor after the colon. */
    private String key() {
        char c = s.charAt(pos);
        String k;
        if (c == '"' || c == '\'') {
            k = c == '"' ? doubleQuoted() : singleQuoted();
            skipSpaces();
        } else {
            if (!plainStart(pos)) {
                throw new Unsupported("a key beginning with '" + c + "'");
            }
            int start = pos;
            while (!(s.charAt(pos) == ':' && blankAt(pos + 1))) {
                pos++;
            }
            k = trimEnd(start, pos);
        }
        pos++; // the ':'
        return k;
    }

    /**
     * Whether this reader takes a plain scalar beginning at {@code i}: not one beginning with an
     * indicator, nor with '-' followed by a blank (YAML 1.2, ns-plain-first).
     */
    private boolean plainStart(int i) {
        char c = at(i);
        if (",[]{}#&*!|>'\"%@`?:".indexOf(c) >= 0) {
            return false; // "?x" and ":x" are plain in YAML 1.2, but not to snakeyaml-engine: left to it
        }
        return !(c == '-' && blankAt(i + 1));
    }

    private String trimEnd(int start, int stop) {
        while (stop > start && (s.charAt(stop - 1) == ' ' || s.charAt(stop - 1) == '\t')) {
            stop--;
        }
        return s.substring(start, stop);
    }

    /** A plain scalar that is a value in block context: the rest of the line, up to a comment. */
    private Object plainValue(int parent) {
        if (!plainStart(pos)) {
            throw new Unsupported("a value beginning with '" + at(pos) + "'");
        }
        int start = pos;
        while (pos < end) {
            char c = s.charAt(pos);
            if (c == '\n') {
                break;
            }
            if (c == ':' && blankAt(pos + 1)) {
                throw new Unsupported("': ' in a plain value");
            }
            if (c == '#' && (s.charAt(pos - 1) == ' ' || s.charAt(pos - 1) == '\t')) {
                break;
            }
            pos++;
        }
        String v = trimEnd(start, pos);
        // A following line indented deeper than the parent would continue the scalar (folded).
        int save = pos;
        int saveLine = lineStart;
        if (nextContentLine() && col() > parent) {
            throw new Unsupported("a plain scalar over several lines");
        }
        pos = save;
        lineStart = saveLine;
        return Yaml.plain(v);
    }

    /** A literal block scalar: "|" or "|-", the content indented deeper than {@code parent}. */
    private String literal(int parent) {
        pos++; // '|'
        boolean strip = false;
        if (at(pos) == '-') {
            strip = true;
            pos++;
        }
        char h = at(pos);
        if (h == '+' || h >= '0' && h <= '9') {
            throw new Unsupported("block scalar indicator '" + h + "'");
        }
        expectLineEnd();
        skipToLineEnd();
        // Lines of the scalar: from the next line on.
        int p = pos < end ? pos + 1 : end;
        int indent = -1;
        int maxLeadingBlank = 0;
        StringBuilder sb = new StringBuilder();
        int pendingBreaks = 0;
        int contentEnd = p;
        while (p < end) {
            int nl = s.indexOf('\n', p);
            int lineEnd = nl < 0 || nl > end ? end : nl;
            int sp = p;
            while (sp < lineEnd && s.charAt(sp) == ' ') {
                sp++;
            }
            boolean blank = sp == lineEnd;
            if (blank) {
                if (indent < 0) {
                    maxLeadingBlank = Math.max(maxLeadingBlank, sp - p);
                    pendingBreaks++;
                } else if (sp - p > indent) {
                    flushBreaks(sb, pendingBreaks);
                    pendingBreaks = 0;
                    sb.append(s, p + indent, lineEnd);
                    pendingBreaks = 1;
                } else {
                    pendingBreaks++;
                }
                p = lineEnd + 1;
                contentEnd = Math.min(p, end);
                continue;
            }
            int ind = sp - p;
            if (indent < 0) {
                if (ind <= parent) {
                    break; // an empty scalar
                }
                if (maxLeadingBlank > ind) {
                    throw new Unsupported("leading blank line indented deeper than the block scalar");
                }
                if (s.charAt(sp) == '\t') {
                    throw new Unsupported("tab in a block scalar's indentation");
                }
                indent = ind;
            } else if (ind < indent) {
                break;
            }
            flushBreaks(sb, pendingBreaks);
            sb.append(s, p + indent, lineEnd);
            pendingBreaks = 1;
            p = lineEnd + 1;
            contentEnd = Math.min(p, end);
        }
        // The cursor goes to the start of the line that ended the scalar.
        pos = Math.min(contentEnd, end);
        lineStart = pos;
        if (sb.length() == 0) {
            return "";
        }
        if (!strip) {
            sb.append('\n');
        }
        return sb.toString();
    }

    private static void flushBreaks(StringBuilder sb, int n) {
        for (int i = 0; i < n; i++) {
            sb.append('\n');
        }
    }



    // ---- flow context ----

    /** Skips spaces, line breaks and comments inside a flow collection; lines must stay indented. */
    private void flowSpace(int parent) {
        while (pos < end) {
            char c = s.charAt(pos);
            if (c == ' ' || c == '\t') {
                pos++;
            } else if (c == '\n') {
                pos++;
                lineStart = pos;
                int i = pos;
                while (i < end && s.charAt(i) == ' ') {
                    i++;
                }
                // Flow content continues deeper than its block parent; a closing bracket may come back out.
                if (i < end && "\n#]}".indexOf(s.charAt(i)) < 0 && i - lineStart <= parent) {
                    throw new Unsupported("flow content not indented");
                }
            } else if (c == '#' && blankAt(pos - 1)) {
                skipToLineEnd();
            } else {
                return;
            }
        }
    }

    private Object flow(int parent) {
        flowSpace(parent);
        if (pos >= end) {
            throw new Unsupported("document ends inside a flow collection");
        }
        char c = s.charAt(pos);
        switch (c) {
            case '{' -> {
                return flowMapping(parent);
            }
            case '[' -> {
                return flowSequence(parent);
            }
            case '"' -> {
                return doubleQuoted();
            }
            case '\'' -> {
                return singleQuoted();
            }
            case '!', '?', '|', '>', '%', '@', '`', '#', ',', ']', '}', '&', '*' -> throw new Unsupported("indicator '" + c + "' in flow");
            default -> {
                return Yaml.plain(flowPlain(parent));
            }
        }
    }

    private String flowPlain(int parent) {
        int start = pos;
        // In flow, a plain scalar may not begin with '-' before a flow indicator either (ns-plain-safe).
        if (!plainStart(pos) || (at(pos) == '-' && ",[]{}".indexOf(at(pos + 1)) >= 0)) {
            throw new Unsupported("indicator in flow");
        }
        while (pos < end) {
            char c = s.charAt(pos);
            if (c == '\n' || c == ',' || c == '[' || c == ']' || c == '{' || c == '}') {
                break;
            }
            if (c == ':' && (blankAt(pos + 1) || ",[]{}".indexOf(at(pos + 1)) >= 0)) {
                break;
            }
            if (c == '#' && blankAt(pos - 1)) {
                break;
            }
            pos++;
        }
        String v = trimEnd(start, pos);
        if (at(pos) == '\n') {
            int save = pos;
            int saveLine = lineStart;
            flowSpace(parent);
            char next = at(pos);
            if (pos < end && ",]}:".indexOf(next) < 0) {
                throw new Unsupported("a plain scalar over several lines in flow");
            }
            pos = save;
            lineStart = saveLine;
        }
        return v;
    }

    private Map<String, Object> flowMapping(int parent) {
        pos++; // '{'
        Map<String, Object> out = new LinkedHashMap<>();
        List<Object> merges = null;
        while (true) {
            flowSpace(parent);
            char c = at(pos);
            if (c == '}') {
                pos++;
                break;
            }
            if (c == '{' || c == '[' || c == '*' || c == '&') {
                throw new Unsupported("complex key in flow");
            }
            boolean quoted = c == '"' || c == '\'';
            Object k = flow(parent);
            if (k == null) {
                throw new Unsupported("null key");
            }
            String key = (String) k;
            int keyLine = lineStart;
            flowSpace(parent);
            Object value = null;
            if (at(pos) == ':') {
                if (lineStart != keyLine) {
                    throw new Unsupported("a flow key and its ':' on different lines");
                }
                if (!quoted && !blankAt(pos + 1)) {
                    throw new Unsupported("a plain flow key's ':' without a blank after it");
                }
                pos++;
                flowSpace(parent);
                char d = at(pos);
                if (d != ',' && d != '}') {
                    value = flow(parent);
                    flowSpace(parent);
                }
            }
            if (!quoted && key.equals("<<")) {
                merges = merges == null ? new ArrayList<>() : merges;
                merges.add(value);
            } else if (out.containsKey(key)) {
                throw new Unsupported("duplicate key");
            } else {
                out.put(key, value);
            }
            char d = at(pos);
            if (d == ',') {
                pos++;
            } else if (d == '}') {
                pos++;
                break;
            } else {
                throw new Unsupported("expected ',' or '}'");
            }
        }
        return merges == null ? out : Yaml.merge(out, merges);
    }

    private List<Object> flowSequence(int parent) {
        pos++; // '['
        List<Object> out = new ArrayList<>();
        while (true) {
            flowSpace(parent);
            char c = at(pos);
            if (c == ']') {
                pos++;
                return out;
            }
            out.add(flow(parent));
            flowSpace(parent);
            char d = at(pos);
            if (d == ',') {
                pos++;
            } else if (d == ']') {
                pos++;
                return out;
            } else {
                throw new Unsupported("expected ',' or ']'");
            }
        }
    }

    // ---- quoted scalars ----

    private String singleQuoted() {
        int start = ++pos;
        StringBuilder sb = null;
        while (true) {
            if (pos >= end || s.charAt(pos) == '\n') {
                throw new Unsupported("a quoted scalar over several lines");
            }
            char c = s.charAt(pos);
            if (c == '\'') {
                if (at(pos + 1) == '\'') {
                    sb = sb == null ? new StringBuilder() : sb;
                    sb.append(s, start, pos + 1);
                    pos += 2;
                    start = pos;
                    continue;
                }
                String tail = s.substring(start, pos);
                pos++;
                return sb == null ? tail : sb.append(tail).toString();
            }
            pos++;
        }
    }

    /** A double-quoted scalar on one line, without escapes (an escape is the reference reader's: readers differ on them). */
    private String doubleQuoted() {
        int start = ++pos;
        while (true) {
            if (pos >= end || s.charAt(pos) == '\n') {
                throw new Unsupported("a quoted scalar over several lines");
            }
            char c = s.charAt(pos);
            if (c == '"') {
                return s.substring(start, pos++);
            }
            if (c == '\\') {
                throw new Unsupported("an escape in a double-quoted scalar");
            }
            pos++;
        }
    }
}
