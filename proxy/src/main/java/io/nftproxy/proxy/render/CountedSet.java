package io.nftproxy.proxy.render;

import java.util.HashMap;
import java.util.Map;

/**
 * A set of ours whose elements carry a connection counter (--service-counters): its name, how
 * its key names a service port, and what a packet counted there met. What builds the sets
 * ({@link CountedSets}) and what reads their counters back (counters.CounterAttribution) both
 * take it from here, so that a set renamed, or a counting set added, cannot leave the counters
 * behind unnoticed. The endpoint maps' own names (one per bucket of counts and block) are the pick
 * trees' ({@link PickTree}), each read back here by its kind.
 */
public enum CountedSet {
    SERVICE_IPS(TableNames.SERVICE_IPS, Key.FRONTEND, Met.SERVICE),
    SERVICE_NODEPORTS(TableNames.SERVICE_NODEPORTS, Key.NODEPORT, Met.SERVICE),
    SERVICE_CHAINS(TableNames.SERVICE_CHAINS, Key.FRONTEND, Met.SERVICE),
    NODEPORT_CHAINS(TableNames.NODEPORT_CHAINS, Key.NODEPORT, Met.SERVICE),
    LOCAL_IPS(TableNames.LOCAL_IPS, Key.FRONTEND, Met.SERVICE),
    LOCAL_NODEPORTS(TableNames.LOCAL_NODEPORTS, Key.NODEPORT, Met.SERVICE),
    CHAIN_ENDPOINTS(TableNames.CHAIN_ENDPOINTS, Key.FIRST_CLUSTER_IP_AND_ENDPOINT, Met.ENDPOINT),
    NO_ENDPOINT_REJECT(TableNames.NO_ENDPOINT_REJECT, Key.FRONTEND, Met.REJECT),
    NO_ENDPOINT_DROP(TableNames.NO_ENDPOINT_DROP, Key.FRONTEND, Met.DROP),
    NODEPORT_NO_ENDPOINT_REJECT(TableNames.NODEPORT_NO_ENDPOINT_REJECT, Key.NODEPORT, Met.REJECT),
    NODEPORT_NO_ENDPOINT_DROP(TableNames.NODEPORT_NO_ENDPOINT_DROP, Key.NODEPORT, Met.DROP),
    NO_LOCAL_ENDPOINT(TableNames.NO_LOCAL_ENDPOINT, Key.FRONTEND, Met.DROP),
    NODEPORT_NO_LOCAL_ENDPOINT(TableNames.NODEPORT_NO_LOCAL_ENDPOINT, Key.NODEPORT, Met.DROP),
    /**
     * The pick trees' maps from "frontend . index" to endpoint, one per bucket of counts and block,
     * by their kind's name; the hashed picks' slots maps ({@link MaglevPick}) count as these.
     */
    SERVICE_ENDPOINTS(TableNames.SERVICE_ENDPOINTS, Key.FRONTEND_INDEX, Met.ENDPOINT),
    LOCAL_ENDPOINTS(TableNames.LOCAL_ENDPOINTS, Key.FRONTEND_INDEX, Met.ENDPOINT),
    NODEPORT_ENDPOINTS(TableNames.NODEPORT_ENDPOINTS, Key.NODEPORT_INDEX, Met.ENDPOINT),
    NODEPORT_LOCAL_ENDPOINTS(TableNames.NODEPORT_LOCAL_ENDPOINTS, Key.NODEPORT_INDEX, Met.ENDPOINT);

    /** How an element's key names its service port. */
    public enum Key {
        /** "address . protocol . port" (MapKeys#frontend). */
        FRONTEND,
        /** "protocol . port" (MapKeys#nodePort). */
        NODEPORT,
        /** A frontend, then the endpoint's index; the data is the endpoint ("address . port"). */
        FRONTEND_INDEX,
        /** A NodePort, then the endpoint's index; the data is the endpoint. */
        NODEPORT_INDEX,
        /**
         * The service port's first ClusterIP as a frontend (the unspecified address without one),
         * then the endpoint ("address . port"); the unspecified endpoint, port 0, is the external
         * chain's drop when no endpoint is on this node.
         */
        FIRST_CLUSTER_IP_AND_ENDPOINT
    }

    /** What a packet counted in an element met. */
    public enum Met {
        /** Its service port, sent on to an endpoint. */
        SERVICE,
        /** An endpoint (the element names which). */
        ENDPOINT,
        /** A rejection: the service port has no endpoint. */
        REJECT,
        /** A drop: no endpoint for that traffic (none ready, or none on this node under policy Local). */
        DROP
    }

    private static final Map<String, CountedSet> BY_NAME = new HashMap<>();

    static {
        for (CountedSet s : values()) {
            BY_NAME.put(s.setName, s);
        }
    }

    private final String setName;
    private final Key key;
    private final Met met;

    CountedSet(String setName, Key key, Met met) {
        this.setName = setName;
        this.key = key;
        this.met = met;
    }

    /**
     * The counting set {@code set} is (an endpoint map by its kind, {@code service-endpoints-9-16}
     * as {@link #SERVICE_ENDPOINTS}), or null for a set whose elements never count. Allocates
     * nothing: asked of every set a fragment declares.
     */
    public static CountedSet of(String set) {
        String base = PickTree.endpointsBaseOf(set);
        if (base != null) {
            return BY_NAME.get(base);
        }
        MaglevPick.SlotsMap hashed = MaglevPick.parse(set);
        if (hashed != null) {
            // "frontend . slot" to endpoint: laid out as the trees' maps, a connection counted in its slot.
            return hashed.kind().ip ? SERVICE_ENDPOINTS : NODEPORT_ENDPOINTS;
        }
        CountedSet s = BY_NAME.get(set);
        return s == null || s.endpointMaps() ? null : s; // the maps are named by bucket, never by their kind alone
    }

    /** The set's name; for the endpoint maps, the start of their names. */
    public String setName() {
        return setName;
    }

    public Key key() {
        return key;
    }

    public Met met() {
        return met;
    }

    /** Whether these are the trees' endpoint maps, which count only with --endpoint-counters too. */
    public boolean endpointMaps() {
        return key == Key.FRONTEND_INDEX || key == Key.NODEPORT_INDEX;
    }
}
