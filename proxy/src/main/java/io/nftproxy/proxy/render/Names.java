package io.nftproxy.proxy.render;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.ServicePort;

/**
 * Readable, stable object names: a human reading {@code nft list table ip nftproxy} sees which
 * service a chain serves. Every name is an nft identifier (IPv6 colons become dots), so the
 * listing loads back with {@code nft -f}.
 */
public final class Names {
    private Names() {
    }

    static String service(ServicePort s) {
        return s.id().namespace() + "/" + s.id().name() + "/" + s.protocol().lower() + "/" + s.port();
    }

    /** The cluster-policy chain: picks among all (usable) endpoints. */
    public static String clusterChain(ServicePort s) {
        return "svc-" + service(s);
    }

    /** The local-policy chain: picks among this node's endpoints. */
    public static String localChain(ServicePort s) {
        return "svl-" + service(s);
    }

    /** External traffic of an externalTrafficPolicy: Local service. */
    public static String externalChain(ServicePort s) {
        return "ext-" + service(s);
    }

    /** loadBalancerSourceRanges of a service. */
    public static String firewallChain(ServicePort s) {
        return "fw-" + service(s);
    }

    /** Session-affinity memory of one endpoint of a service. */
    public static String affinitySet(ServicePort s, Endpoint e) {
        return "aff-" + service(s) + "/" + Inet.format(e.address()).replace(':', '.') + "-" + e.port();
    }
}
