package io.nftproxy.proxy.events;

/**
 * Where kube-proxy's events go (the Starting event on the Node, a health server that cannot
 * listen): the API server's events when the source is one, nowhere otherwise. Recording never
 * blocks the caller and never fails it.
 */
public interface EventRecorder {
    /** The object an event is about, as kube-proxy refers to it. */
    record Regarding(String kind, String namespace, String name) {
        /** A Node, as kube-proxy's NodeRef names it (no namespace). */
        public static Regarding node(String name) {
            return new Regarding("Node", "", name);
        }

        public static Regarding service(String namespace, String name) {
            return new Regarding("Service", namespace, name);
        }
    }

    enum Type {
        NORMAL("Normal"), WARNING("Warning");

        private final String api;

        Type(String api) {
            this.api = api;
        }

        /** The event's type as the API spells it. */
        public String api() {
            return api;
        }
    }

    void record(Regarding regarding, Type type, String reason, String action, String note);

    default void warning(Regarding regarding, String reason, String action, String note) {
        record(regarding, Type.WARNING, reason, action, note);
    }

    /** Events with no API server to go to (manifests): the log line beside them says it all. */
    EventRecorder NONE = (regarding, type, reason, action, note) -> {
    };
}
