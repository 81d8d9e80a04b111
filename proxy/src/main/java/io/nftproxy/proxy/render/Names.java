package io.nftproxy.proxy.render;

import java.nio.charset.StandardCharsets;

import io.nftproxy.proxy.model.ServicePort;

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

    static String service(ServicePort s) {
        String full = s.id().namespace() + "/" + s.id().name() + "/" + s.protocol().lower() + "/" + s.port();
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
     * Prefix of the marking chains {@code nftproxy trace} adds to our table for a while: named
     * here, beside the daemon's own chain names, so that the drift watcher can leave them alone
     * without knowing the tracer.
     */
    public static final String TRACE = "trace-";

    /** Whether a chain name is a trace's marking chain (not the daemon's, not drift). */
    public static boolean isTraceChain(String chain) {
        return chain != null && chain.startsWith(TRACE);
    }

    /** Prefixes of the chains of one service port, by what the chain does. */
    public static final String CLUSTER = "svc-";
    public static final String LOCAL = "svl-";
    public static final String EXTERNAL = "ext-";

    /** The cluster-policy chain: picks among all (usable) endpoints. */
    public static String clusterChain(ServicePort s) {
        return CLUSTER + service(s);
    }

    /** The local-policy chain: picks among this node's endpoints. */
    public static String localChain(ServicePort s) {
        return LOCAL + service(s);
    }

    /** External traffic of an externalTrafficPolicy: Local service. */
    public static String externalChain(ServicePort s) {
        return EXTERNAL + service(s);
    }

    /** Whether a chain sorts external traffic of policy Local: a port's own, or the shared ones. */
    public static boolean isExternalLocal(String chain) {
        return chain.startsWith(EXTERNAL) || chain.equals(NftRenderer.IP_EXTERNAL_LOCAL)
                || chain.equals(NftRenderer.NODEPORT_EXTERNAL_LOCAL);
    }

    /** Whether a chain picks among this node's endpoints only: a port's own, or the shared local trees'. */
    public static boolean picksLocal(String chain) {
        return chain.startsWith(LOCAL) || chain.startsWith(PickTree.Kind.IP_LOCAL.prefix + "-pick-")
                || chain.startsWith(PickTree.Kind.NODEPORT_LOCAL.prefix + "-pick-");
    }
}
