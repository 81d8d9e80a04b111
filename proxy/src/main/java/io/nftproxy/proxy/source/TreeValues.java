package io.nftproxy.proxy.source;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reading an object's tree as YAML or JSON gave it (maps, lists, scalars), the way the API server
 * would have typed it: a field of the wrong shape is an {@link InvalidObjectException} naming the
 * object and the field; a number written as text is a number; YAML 1.1's booleans are booleans.
 */
final class TreeValues {
    private TreeValues() {
    }

    /**
     * The booleans kubectl sends for a manifest's plain scalars: it reads YAML as YAML 1.1 does
     * (sigs.k8s.io/yaml over go-yaml v2), so "ready: yes" is true and "ready: off" false.
     */
    static final Set<String> YAML11_TRUE = Set.of("true", "True", "TRUE", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON");
    static final Set<String> YAML11_FALSE = Set.of("false", "False", "FALSE", "n", "N", "no", "No", "NO", "off", "Off", "OFF");

    /** A scalar as text, null when absent or not a scalar. */
    static String text(Object o) {
        return o instanceof String s ? s : o instanceof Number || o instanceof Boolean ? o.toString() : null;
    }

    static String text(Object o, String what, String field) throws InvalidObjectException {
        if (o == null || o instanceof String) {
            return (String) o;
        }
        if (o instanceof Number || o instanceof Boolean) {
            return o.toString();
        }
        throw new InvalidObjectException(what, field + " is not a scalar");
    }

    static Integer integer(Object o, String what, String field) throws InvalidObjectException {
        if (o == null) {
            return null;
        }
        if (o instanceof Integer i) {
            return i;
        }
        String s = text(o, what, field);
        try {
            return Integer.valueOf(s.trim());
        } catch (NumberFormatException e) {
            throw new InvalidObjectException(what, field + " '" + s + "' is not a number");
        }
    }

    static Boolean bool(Object o, String what, String field) throws InvalidObjectException {
        if (o == null || o instanceof Boolean) {
            return (Boolean) o;
        }
        String s = text(o, what, field);
        if (YAML11_TRUE.contains(s)) {
            return true;
        }
        if (YAML11_FALSE.contains(s)) {
            return false;
        }
        throw new InvalidObjectException(what, field + " '" + s + "' is not true or false");
    }

    static Map<?, ?> map(Object o, String what, String field) throws InvalidObjectException {
        if (o == null || o instanceof Map) {
            return (Map<?, ?>) o;
        }
        throw new InvalidObjectException(what, field + " is not a mapping");
    }

    /** A mapping, or an empty one when the field is absent or of another shape (for the lenient readers). */
    static Map<?, ?> mapOrEmpty(Object o) {
        return o instanceof Map<?, ?> m ? m : Map.of();
    }

    static List<?> list(Object o, String what, String field) throws InvalidObjectException {
        if (o == null) {
            return List.of();
        }
        if (o instanceof List<?> l) {
            return l;
        }
        throw new InvalidObjectException(what, field + " is not a list");
    }

    static List<String> strings(Object o, String what, String field) throws InvalidObjectException {
        List<String> out = new ArrayList<>();
        for (Object item : list(o, what, field)) {
            String s = text(item, what, field + "[]");
            if (s != null) {
                out.add(s);
            }
        }
        return out;
    }

    static String intern(String s) {
        return s == null ? null : s.intern();
    }
}
