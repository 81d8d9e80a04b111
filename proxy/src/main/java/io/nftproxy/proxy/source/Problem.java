package io.nftproxy.proxy.source;

/**
 * What a reported problem is about: an object the proxy read, a frontend two service ports claim,
 * or a source of objects (a manifest file). The key of the store's problem list, typed so that
 * one kind never stands in for another by a string prefix.
 */
public record Problem(Kind kind, String subject) implements Comparable<Problem> {
    public enum Kind {
        OBJECT, CONFLICT, SOURCE
    }

    static Problem object(ObjectKey key) {
        return new Problem(Kind.OBJECT, key.toString());
    }

    static Problem conflict(FrontendClaims.Frontend f) {
        return new Problem(Kind.CONFLICT, f.toString());
    }

    public static Problem source(String label) {
        return new Problem(Kind.SOURCE, label);
    }

    /** Objects, then conflicts, then sources; by name within each: the order reports list them in. */
    @Override
    public int compareTo(Problem o) {
        int k = kind.compareTo(o.kind);
        return k != 0 ? k : subject.compareTo(o.subject);
    }

    @Override
    public String toString() {
        return kind == Kind.CONFLICT ? "conflict " + subject : subject;
    }
}
