package io.nftproxy.proxy.source;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * Who serves each frontend (an address, protocol and port a service is reached on, or a NodePort)
 * when two service ports claim the same one, which the API server allows (a reused clusterIP, the
 * same externalIPs entry on two services). One owner per frontend, the first service port by
 * name, as a deterministic order decides it; the others lose that frontend (and only it) and the
 * conflict is reported until it is gone. Kept incrementally: a change re-resolves only the service
 * ports that share a frontend with what changed, so that the loser takes over at once when the
 * owner goes, on a partial sync.
 */
final class FrontendClaims {
    /** An address (null for a NodePort), protocol and port. */
    record Frontend(InetAddress address, Protocol protocol, int port) {
        @Override
        public String toString() {
            String a = address == null ? "NodePort " : Inet.format(address) + ":";
            return a + port + "/" + protocol;
        }
    }

    /**
     * Each frontend's claimants: the one port that claims it (nearly every frontend), or a set of
     * them in their order when several do. A set per frontend cost 200,000 sets of one at 100k
     * services (about 25 MB, and a fifth of a first snapshot's time).
     */
    private final Map<Frontend, Object> claims = new HashMap<>();
    /** The frontends with more than one claimant, kept as claims change: a snapshot reads them without a scan. */
    private final Set<Frontend> contested = new HashSet<>();
    private final Map<ServicePortName, ServicePort> declared = new HashMap<>();
    /** Frontends whose claimants changed since {@link #drainTouched}: only their conflicts are reported again. */
    private final Set<Frontend> touchedSinceDrain = new HashSet<>();
    /** Frontends {@link #drainTouched} last returned as contested: their end is returned once. */
    private final Set<Frontend> reported = new HashSet<>();

    static List<Frontend> frontends(ServicePort p) {
        List<Frontend> out = new ArrayList<>();
        for (List<InetAddress> l : List.of(p.clusterIPs(), p.externalIPs(), p.loadBalancerIPs())) {
            for (InetAddress a : l) {
                out.add(new Frontend(a, p.protocol(), p.port()));
            }
        }
        if (p.nodePort() != 0) {
            out.add(new Frontend(null, p.protocol(), p.nodePort()));
        }
        return out;
    }

    /** Sets or removes (null) a declared port; returns the ids whose resolved port may have changed. */
    Set<ServicePortName> declare(ServicePortName id, ServicePort p) {
        Set<Frontend> touched = new HashSet<>();
        ServicePort had = declared.remove(id);
        if (had != null) {
            for (Frontend f : frontends(had)) {
                unclaim(f, id);
                touched.add(f);
            }
        }
        if (p != null) {
            declared.put(id, p);
            for (Frontend f : frontends(p)) {
                claim(f, id);
                touched.add(f);
            }
        }
        Set<ServicePortName> affected = new HashSet<>();
        affected.add(id);
        for (Frontend f : touched) {
            Object v = claims.get(f);
            if (v instanceof ServicePortName one) {
                affected.add(one);
            } else if (v != null) {
                affected.addAll(several(v));
            }
            // Only these can be reported by the next drain: one claimed alone since and not reported is not.
            if (contested.contains(f) || reported.contains(f)) {
                touchedSinceDrain.add(f);
            }
        }
        return affected;
    }

    private void claim(Frontend f, ServicePortName id) {
        Object v = claims.get(f);
        if (v == null) {
            claims.put(f, id);
        } else if (v instanceof ServicePortName one) {
            if (!one.equals(id)) {
                TreeSet<ServicePortName> s = new TreeSet<>();
                s.add(one);
                s.add(id);
                claims.put(f, s);
                contested.add(f);
            }
        } else {
            several(v).add(id);
        }
    }

    private void unclaim(Frontend f, ServicePortName id) {
        Object v = claims.get(f);
        if (v instanceof ServicePortName one) {
            if (one.equals(id)) {
                claims.remove(f);
            }
        } else if (v != null) {
            TreeSet<ServicePortName> s = several(v);
            s.remove(id);
            if (s.size() < 2) {
                claims.put(f, s.first());
                contested.remove(f);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static TreeSet<ServicePortName> several(Object claimants) {
        return (TreeSet<ServicePortName>) claimants;
    }

    /** The port that serves a claimed frontend: its only claimant, or the first by name. */
    private ServicePortName owner(Frontend f) {
        Object v = claims.get(f);
        return v instanceof ServicePortName one ? one : several(v).first();
    }

    /** The port as it is served: without the frontends another port owns. Null when not declared. */
    ServicePort resolved(ServicePortName id) {
        ServicePort p = declared.get(id);
        if (p == null) {
            return null;
        }
        boolean lost = false;
        for (Frontend f : frontends(p)) {
            lost |= !owner(f).equals(id);
        }
        if (!lost) {
            return p;
        }
        return new ServicePort(p.id(), keep(p.clusterIPs(), p, id), p.port(),
                p.nodePort() != 0 && owner(new Frontend(null, p.protocol(), p.nodePort())).equals(id) ? p.nodePort() : 0,
                keep(p.externalIPs(), p, id), keep(p.loadBalancerIPs(), p, id), p.loadBalancerSourceRanges(),
                p.externalPolicyLocal(), p.internalPolicyLocal(), p.affinitySeconds(), p.healthCheckNodePort(), p.algorithm());
    }

    private List<InetAddress> keep(List<InetAddress> l, ServicePort p, ServicePortName id) {
        return l.stream().filter(a -> owner(new Frontend(a, p.protocol(), p.port())).equals(id)).toList();
    }

    /**
     * The frontends whose claimants changed since the last call and that are contested now or
     * were when last returned, each with its claimants now, owner first (fewer than two: the
     * conflict is over), in a stable order. Reporting only these keeps a change's cost
     * independent of how many conflicts stand, and a first snapshot's independent of how many
     * frontends are not in conflict.
     */
    Map<Frontend, List<ServicePortName>> drainTouched() {
        // In the order of their text, as they are logged; each frontend's text made once, not on
        // both sides of every comparison (a fifth of a profile's samples of a 30k one-shot).
        List<Map.Entry<String, Frontend>> byText = new ArrayList<>();
        for (Frontend f : touchedSinceDrain) {
            if (contested.contains(f) || reported.contains(f)) {
                byText.add(Map.entry(f.toString(), f));
            }
        }
        byText.sort(Map.Entry.comparingByKey());
        Map<Frontend, List<ServicePortName>> out = new LinkedHashMap<>();
        for (Map.Entry<String, Frontend> e : byText) {
            Frontend f = e.getValue();
            if (contested.contains(f)) {
                out.put(f, List.copyOf(several(claims.get(f))));
                reported.add(f);
            } else {
                out.put(f, List.of());
                reported.remove(f);
            }
        }
        touchedSinceDrain.clear();
        return out;
    }
}
