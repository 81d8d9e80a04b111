package io.nftproxy.proxy.manifest;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;

/**
 * Reads JSON manifests (one or more top-level values) into the same tree as {@link Yaml}: numbers
 * and booleans as their text, so that both formats give identical trees.
 */
public final class Json {
    private static final JsonFactory FACTORY = new JsonFactory();

    private Json() {
    }

    public static List<Object> documents(String text) {
        List<Object> out = new ArrayList<>();
        documents(text, out::add);
        return out;
    }

    /** Hands each top-level value to {@code sink} as soon as it is read. */
    public static void documents(String text, Consumer<Object> sink) {
        try (JsonParser p = FACTORY.createParser(text)) {
            while (p.nextToken() != null) {
                Object v = value(p);
                if (v != null) {
                    sink.accept(v);
                }
            }
        } catch (IOException e) {
            String msg = e.getMessage() == null ? e.toString() : e.getMessage();
            throw new SyntaxException(msg.lines().findFirst().orElse(msg) + location(e));
        }
    }

    private static String location(IOException e) {
        if (e instanceof JsonProcessingException j && j.getLocation() != null) {
            return " (line " + j.getLocation().getLineNr() + ", column " + j.getLocation().getColumnNr() + ")";
        }
        return "";
    }

    private static Object value(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        switch (t) {
            case START_OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String k = p.currentName();
                    p.nextToken();
                    if (m.containsKey(k)) {
                        throw new SyntaxException("duplicate key '" + k + "'" + " (line " + p.currentLocation().getLineNr() + ")");
                    }
                    m.put(k, value(p));
                }
                return m;
            }
            case START_ARRAY -> {
                List<Object> l = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    l.add(value(p));
                }
                return l;
            }
            case VALUE_NULL -> {
                return null;
            }
            default -> {
                return p.getText();
            }
        }
    }
}
