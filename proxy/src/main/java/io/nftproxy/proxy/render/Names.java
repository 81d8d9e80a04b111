package io.nftproxy.proxy.render;

import java.nio.charset.StandardCharsets;

import io.nftproxy.proxy.model.ServicePortName;

/**
 * Readable, stable object names: a human reading {@code nft list table ip nftproxy} sees which
 * service a chain serves. Every name is an nft identifier (IPv6 colons become dots), so the
 * listing loads back with {@code nft -f}.
 */
public final class Names {
    private Names() {
    }

    /**
     * Longest service part of a name: nf_tables names end at 255 bytes, and the longest name
     * built on it (an affinity set: an IPv6 address and port more) must still fit.
     */
    static final int MAX_SERVICE_BYTES = 180;

    static String service(ServicePortName id, int port) {
        String full = id.namespace() + "/" + id.name() + "/" + id.protocol().lower() + "/" + port;
        byte[] b = full.getBytes(StandardCharsets.UTF_8);
        if (b.length <= MAX_SERVICE_BYTES) {
            return full;
        }
        // Too long for the kernel (a manifest's name can be): a readable head and a hash of the whole,
        // as kube-proxy hashes and truncates its chain names.
        long h = 0xcbf29ce484222325L;
        for (byte x : b) {
            h = (h ^ (x & 0xff)) * 0x100000001b3L;
        }
        String head = new String(b, 0, MAX_SERVICE_BYTES - 17, StandardCharsets.UTF_8);
        while (head.getBytes(StandardCharsets.UTF_8).length > MAX_SERVICE_BYTES - 17) {
            head = head.substring(0, head.length() - 1); // a multi-byte character cut in two
        }
        return head + "~" + String.format("%016x", h);
    }

    /**
     * The comment a service port's elements carry: "namespace/name:port" as kube-proxy names a
     * service port, cut to what nft keeps of a comment ({@link #commentedService} and {@link
     * #commentedPort} read it back: the trace names a packet's service from the kernel alone).
     */
    public static String elementComment(ServicePortName id) {
        return FragmentBuilder.comment(id.nameAndPort());
    }

    /** The service ("namespace/name") an element's comment names ({@link #elementComment}). */
    public static String commentedService(String comment) {
        int colon = comment.indexOf(':');
        return colon < 0 ? comment : comment.substring(0, colon);
    }

    /** The port's name in an element's comment, empty when it has none ({@link #elementComment}). */
    public static String commentedPort(String comment) {
        int colon = comment.indexOf(':');
        return colon < 0 ? "" : comment.substring(colon + 1);
    }

    /**
     * Prefix of the marking chains {@code nftproxy trace} adds to our table for a while: named
     * here, beside the daemon's own chain names, so that the drift watcher can leave them alone
     * without knowing the tracer.
     */
    public static final String TRACE = "trace-";

    /** Whether a chain name is a trace's marking chain (not the daemon's, not drift). Asked of every chain event: a prefix. */
    public static boolean isTraceChain(String chain) {
        return chain != null && chain.startsWith(TRACE);
    }

    /** A trace's marking chain on a hook ({@code prerouting}, {@code output}), tagged with the trace's tag. */
    public static String traceChain(String hook, String tag) {
        return ObjectName.format(ObjectName.Scheme.TRACE_CHAIN, null, null, hook + "-" + tag);
    }

    /** The hook a trace's marking chain is on ({@link #traceChain}), or null for another chain. */
    public static String traceHook(String chain) {
        ObjectName n = chain == null ? null : ObjectName.parse(chain);
        if (n == null || n.scheme() != ObjectName.Scheme.TRACE_CHAIN) {
            return null;
        }
        int dash = n.rest().indexOf('-');
        return dash < 0 ? n.rest() : n.rest().substring(0, dash);
    }

    /** Prefixes of the chains of one service port, by what the chain does. */
    public static final String CLUSTER = "svc-";
    public static final String LOCAL = "svl-";
    public static final String EXTERNAL = "ext-";

    /** The cluster-policy chain: picks among all (usable) endpoints. */
    public static String clusterChain(ServicePortName id, int port) {
        return ObjectName.format(ObjectName.Scheme.CLUSTER_CHAIN, null, null, service(id, port));
    }

    /** The local-policy chain: picks among this node's endpoints. */
    public static String localChain(ServicePortName id, int port) {
        return ObjectName.format(ObjectName.Scheme.LOCAL_CHAIN, null, null, service(id, port));
    }

    /** External traffic of an externalTrafficPolicy: Local service. */
    public static String externalChain(ServicePortName id, int port) {
        return ObjectName.format(ObjectName.Scheme.EXTERNAL_CHAIN, null, null, service(id, port));
    }

    /** Whether a chain sorts external traffic of policy Local: a port's own, or the shared ones. */
    public static boolean isExternalLocal(String chain) {
        ObjectName n = ObjectName.parse(chain);
        return n != null && (n.scheme() == ObjectName.Scheme.EXTERNAL_CHAIN
                || n.text().equals(TableNames.IP_EXTERNAL_LOCAL) || n.text().equals(TableNames.NODEPORT_EXTERNAL_LOCAL));
    }

    /** Whether a chain picks among this node's endpoints only: a port's own, or the shared local trees'. */
    public static boolean picksLocal(String chain) {
        ObjectName n = ObjectName.parse(chain);
        return n != null && (n.scheme() == ObjectName.Scheme.LOCAL_CHAIN || n.scheme() == ObjectName.Scheme.PICK && n.tree().local);
    }
    /**
     * The names of one pick tree's sets, for a reader of the kernel ({@code nftproxy dump
     * --service}): by kind of frontend, an IP port or a NodePort, over the cluster's endpoints or
     * (external traffic of policy Local) this node's.
     */
    public static Tree tree(boolean ipPort, boolean local) {
        for (PickTree.Kind k : PickTree.Kind.values()) {
            if (k.ip == ipPort && k.local == local) {
                return new Tree(k);
            }
        }
        throw new AssertionError("every kind of frontend has a tree");
    }

    /** One tree's set names (see {@link PickTree}). */
    public static final class Tree {
        private final PickTree.Kind kind;

        private Tree(PickTree.Kind kind) {
            this.kind = kind;
        }

        /** The set of frontends whose endpoint count minus one has {@code bit} set (bits 0 to 6). */
        public String countBit(int bit) {
            return kind.bitSet(bit);
        }

        /** How many bits the count sets hold. */
        public static int bits() {
            return PickTree.BITS;
        }

        /** The set of frontends whose count is in block {@code block} (1 for 129..256), up to {@link #blocks()} − 1. */
        public String countBlock(int block) {
            return kind.blockSet(block);
        }

        public static int blocks() {
            return PickTree.BLOCKS;
        }

        /**
         * The block past {@link #blocks()} whose tree {@code chain} is the root of (where a verdict
         * element of {@code service-chains} sends a frontend of more endpoints than the root asks
         * for), or -1 for any other chain.
         */
        public int blockOfRoot(String chain) {
            return PickTree.bigBlockOfRoot(kind, chain);
        }

        /** The map from "frontend . index" to endpoint for a frontend of {@code k} endpoints. */
        public String endpointMap(int k) {
            return kind.endpoints(k);
        }

        /** The timeout in seconds whose sticky frontends of this tree {@code set} holds; -1 for another set. */
        public long stickyTimeout(String set) {
            ObjectName n = ObjectName.parse(set);
            return n != null && n.scheme() == ObjectName.Scheme.STICKY_MEMBERS && n.tree() == kind ? n.n() : -1;
        }
    }
}
