package io.nftproxy.proxy.model;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * How a service port picks among its endpoints, chosen per Service by the annotation {@value
 * #ANNOTATION}. kube-proxy's behaviour, and the default, is {@link #RANDOM}; the others hash the
 * connection's client with a fixed seed into the port's Maglev table (plan.MaglevTable), so that
 * every node sends the same client to the same endpoint, and an endpoint that comes or goes moves
 * its own clients and about 1% of the others'. For those leaving kube-proxy's IPVS mode: its
 * {@code rr} and {@code wrr} are closest to {@link #RANDOM}, {@code mh} (Maglev) to {@link
 * #MAGLEV}, {@code sh} (source hashing) to {@link #SOURCE_HASH} (README: "Load-balancing algorithms").
 */
public enum LbAlgorithm {
    /** A uniform random pick for every new connection (kube-proxy's). */
    RANDOM("random"),
    /** Maglev consistent hashing of the client's address and port: a client's connections spread, each stays put. */
    MAGLEV("maglev"),
    /** Maglev consistent hashing of the client's address alone: all of a client's connections go to one endpoint. */
    SOURCE_HASH("source-hash");

    /** The Service annotation that chooses one. */
    public static final String ANNOTATION = "service.nftproxy.io/lb-algorithm";

    private final String value;

    LbAlgorithm(String value) {
        this.value = value;
    }

    /** The annotation's value that chooses it. */
    public String value() {
        return value;
    }

    /** Whether it hashes the client into a Maglev table (rather than drawing at random). */
    public boolean hashed() {
        return this != RANDOM;
    }

    /** The algorithm an annotation's value names, or null for a value that names none. */
    public static LbAlgorithm of(String value) {
        for (LbAlgorithm a : values()) {
            if (a.value.equals(value)) {
                return a;
            }
        }
        return null;
    }

    /** The values the annotation takes, for a message: "random, maglev, source-hash". */
    public static String choices() {
        return Arrays.stream(values()).map(LbAlgorithm::value).collect(Collectors.joining(", "));
    }
}
