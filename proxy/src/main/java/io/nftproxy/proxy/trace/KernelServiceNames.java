package io.nftproxy.proxy.trace;

import static io.nftproxy.proxy.render.TableNames.CLUSTER_IP_PORTS;
import static io.nftproxy.proxy.render.TableNames.IP_FRONTEND_SETS;
import static io.nftproxy.proxy.render.TableNames.NODEPORT_FRONTEND_SETS;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftKernel;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.render.MapKeys;
import io.nftproxy.proxy.render.Names;
import io.nftproxy.proxy.sync.Generation;

/**
 * Names the service port a packet was addressed to from the kernel alone: the elements of our
 * frontend maps carry the service port in their comment ("namespace/name:port", as kube-proxy
 * writes it), so {@code nftproxy trace} beside a running proxy needs no manifests and no API
 * server. The maps are read when first needed and again, at most once a second, when a packet's
 * frontend is not in what was read (a service added meanwhile).
 */
public final class KernelServiceNames {
    private static final long REREAD_NANOS = 1_000_000_000L;

    private final NftKernel kernel;
    private final String table;
    private final Map<IpFamily, Map<Bytes, String>> frontends = new HashMap<>();
    private final Map<IpFamily, Map<Bytes, String>> nodePorts = new HashMap<>();
    private final Map<IpFamily, Set<Bytes>> clusterIps = new HashMap<>();
    private long readAt;
    private boolean read;

    public KernelServiceNames(NftKernel kernel, String table) {
        this.kernel = kernel;
        this.table = table;
    }

    /** "service namespace/name port NAME (proto) via its ..." for the packet's destination, or null. */
    String describe(TracedPacket p) {
        Protocol proto = p.proxied();
        if (proto == null) {
            return null;
        }
        IpFamily f = IpFamily.of(p.destination());
        Bytes front = MapKeys.frontend(p.destination(), proto.number(), p.destinationPort());
        Bytes nodePort = MapKeys.nodePort(proto.number(), p.destinationPort());
        String found = lookup(f, front, nodePort, proto);
        if (found == null && System.nanoTime() - readAt > REREAD_NANOS) {
            read = false;
            found = lookup(f, front, nodePort, proto);
        }
        return found;
    }

    /**
     * Where service {@code service} ("namespace/name") can be reached, from the comments: each
     * frontend (an address and port, or a NodePort with no address) and its protocol, in no
     * particular order; empty when no element of ours names it.
     */
    public List<Frontend> frontendsOf(String service) {
        readAll();
        List<Frontend> out = new ArrayList<>();
        for (IpFamily f : IpFamily.values()) {
            for (Map<Bytes, String> m : List.of(frontends.getOrDefault(f, Map.of()), nodePorts.getOrDefault(f, Map.of()))) {
                m.forEach((key, comment) -> {
                    if (Names.commentedService(comment).equals(service)) {
                        MapKeys.Frontend fe = MapKeys.decodeFrontend(key);
                        Frontend found = new Frontend(fe.address(), Protocol.ofNumber(fe.proto()), fe.port());
                        if (found.protocol() != null && !out.contains(found)) {
                            out.add(found);
                        }
                    }
                });
            }
        }
        return out;
    }

    /** A service's frontend found in the kernel: an address (null for a NodePort), its protocol and port. */
    public record Frontend(InetAddress address, Protocol protocol, int port) {
    }

    private String lookup(IpFamily f, Bytes front, Bytes nodePort, Protocol proto) {
        if (!read) {
            readAll();
        }
        String c = frontends.getOrDefault(f, Map.of()).get(front);
        if (c != null) {
            String via = clusterIps.getOrDefault(f, Set.of()).contains(front) ? "ClusterIP" : "external or load-balancer IP";
            return TraceExplainer.describe(c, proto, via);
        }
        c = nodePorts.getOrDefault(f, Map.of()).get(nodePort);
        return c == null ? null : TraceExplainer.describe(c, proto, "NodePort");
    }

    private void readAll() {
        read = true;
        readAt = System.nanoTime();
        for (IpFamily f : IpFamily.values()) {
            frontends.put(f, comments(f, IP_FRONTEND_SETS));
            nodePorts.put(f, comments(f, NODEPORT_FRONTEND_SETS));
            clusterIps.put(f, new HashSet<>(comments(f, List.of(CLUSTER_IP_PORTS)).keySet()));
        }
    }

    /**
     * Key to comment of the commented elements of {@code sets} (a set that is not there has none),
     * in either generation of names (sync.Generation): the proxy may be taking its table over.
     */
    private Map<Bytes, String> comments(IpFamily f, List<String> sets) {
        Map<Bytes, String> out = new HashMap<>();
        for (String set : sets) {
            for (Generation g : List.of(Generation.FIRST, Generation.SECOND)) {
                comments(f, g.set(set), out);
            }
        }
        return out;
    }

    private void comments(IpFamily f, String set, Map<Bytes, String> out) {
        try {
            for (SetElement e : kernel.listElements(f.nft(), table, set)) {
                if (e.comment() != null) {
                    out.putIfAbsent(e.key(), e.comment());
                }
            }
        } catch (NftException e) {
            // no such table or set (the proxy is not running, or another mode): nothing to name from
        }
    }
}
