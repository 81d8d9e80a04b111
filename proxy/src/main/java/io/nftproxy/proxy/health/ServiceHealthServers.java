package io.nftproxy.proxy.health;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.NodePortAddresses;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.events.EventRecorder;
import io.nftproxy.proxy.http.ProbeServer;
import io.nftproxy.proxy.http.ProbeServer.Response;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.topology.EndpointSelector;

/**
 * The healthCheckNodePort servers of externalTrafficPolicy: Local services: load balancers probe
 * them to learn which nodes have endpoints. 200 with the local endpoint count while this node has
 * local endpoints and the proxy is healthy, else 503. Servers open and close with the services,
 * inside the node's network namespace.
 */
public final class ServiceHealthServers implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ServiceHealthServers.class);

    /** The servers of one port, one per address it is served on. */
    private record Entry(List<ProbeServer> servers, List<InetSocketAddress> at, String namespace, String name,
                         AtomicInteger local) {
        void close() {
            servers.forEach(ProbeServer::close);
        }
    }

    private final NetNamespace netns;
    private final HealthState health;
    private final ProxyConfig config;
    private final EventRecorder events;
    private final Map<Integer, Entry> servers = new HashMap<>();

    /**
     * Servers on the NodePort addresses of {@code config} ({@link NodePortAddresses}); {@code events}
     * hears of a port that cannot be served, as kube-proxy records it.
     */
    public ServiceHealthServers(NetNamespace netns, HealthState health, ProxyConfig config, EventRecorder events) {
        this.netns = netns;
        this.health = health;
        this.config = config;
        this.events = events;
    }

    /**
     * Where a healthCheckNodePort is served, as kube-proxy's service health server listens: the
     * wildcard when NodePorts are served on every address of both families, else each of this
     * node's addresses that the NodePort addresses hold ({@code local}, asked only then).
     */
    static List<InetSocketAddress> bindAddresses(ProxyConfig config, NodeInfo node, Supplier<List<InetAddress>> local,
                                                 int port) {
        List<Cidr> v4 = NodePortAddresses.of(config, node, IpFamily.V4);
        List<Cidr> v6 = NodePortAddresses.of(config, node, IpFamily.V6);
        if (NodePortAddresses.matchesAll(v4) && NodePortAddresses.matchesAll(v6)) {
            return List.of(new InetSocketAddress(port));
        }
        List<InetSocketAddress> out = new ArrayList<>();
        for (InetAddress a : local.get()) {
            List<Cidr> cidrs = IpFamily.of(a) == IpFamily.V4 ? v4 : v6;
            if (cidrs.stream().anyMatch(c -> c.contains(a)) && out.stream().noneMatch(x -> x.getAddress().equals(a))) {
                out.add(new InetSocketAddress(a, port));
            }
        }
        return out;
    }

    /** Service ports that ask for a health check node port (policy Local): the port and their ready local endpoints. */
    private final Map<ServicePortName, Want> wants = new HashMap<>();

    private record Want(int port, int local) {
    }

    /**
     * Brings the servers in line with the services and their local endpoints. {@code changed}
     * names the service ports that may have changed since the last call; null means any (a full
     * sync, a node change): only those are looked at, so a change costs the same at any size.
     */
    public synchronized void update(ProxyState state, Iterable<ServicePortName> changed) {
        if (changed == null) {
            wants.clear();
            changed = state.services().keySet();
        }
        for (ServicePortName id : changed) {
            ServicePort s = state.services().get(id);
            if (s == null || s.healthCheckNodePort() <= 0 || !s.externalPolicyLocal()) {
                wants.remove(id);
                continue;
            }
            int local = 0;
            for (Endpoint e : EndpointSelector.select(s, state.endpointsOf(s.id()), state.node()).local()) {
                local += e.ready() ? 1 : 0;
            }
            wants.put(id, new Want(s.healthCheckNodePort(), local));
        }
        // Two services on one port (the API server prevents it; manifests may not): the first by name serves it.
        Map<Integer, ServicePort> wanted = new HashMap<>();
        Map<Integer, Integer> localCounts = new HashMap<>();
        wants.forEach((id, w) -> {
            ServicePort s = state.services().get(id);
            if (s == null) {
                return; // gone in a snapshot whose sync failed; the full sync after it clears it
            }
            wanted.merge(w.port(), s, (a, b) -> a.id().compareTo(b.id()) <= 0 ? a : b);
            localCounts.merge(w.port(), w.local(), Math::max);
        });
        // This node's addresses, read once per update and only if a server is to open or move.
        List<InetAddress> local = new ArrayList<>();
        boolean[] read = {false};
        Supplier<List<InetAddress>> addresses = () -> {
            if (!read[0]) {
                read[0] = true;
                try {
                    local.addAll(LocalAddresses.list(netns));
                } catch (IOException | RuntimeException e) {
                    LOG.error("cannot list this node's addresses for the healthCheckNodePorts: {}", e.getMessage());
                }
            }
            return local;
        };
        Map<Integer, List<InetSocketAddress>> at = new HashMap<>();
        for (int port : wanted.keySet()) {
            at.put(port, bindAddresses(config, state.node(), addresses, port));
        }
        servers.entrySet().removeIf(e -> {
            ServicePort s = wanted.get(e.getKey());
            if (s == null || !s.id().namespace().equals(e.getValue().namespace()) || !s.id().name().equals(e.getValue().name())
                    || !e.getValue().at().equals(at.get(e.getKey()))) {
                e.getValue().close();
                LOG.info("closed healthCheckNodePort {} of {}/{}", e.getKey(), e.getValue().namespace(), e.getValue().name());
                return true;
            }
            return false;
        });
        for (Map.Entry<Integer, ServicePort> w : wanted.entrySet()) {
            Entry e = servers.get(w.getKey());
            if (e == null) {
                e = open(w.getKey(), w.getValue(), at.get(w.getKey()));
                if (e == null) {
                    continue;
                }
                servers.put(w.getKey(), e);
            }
            e.local().set(localCounts.get(w.getKey()));
        }
    }

    /**
     * kube-proxy's body, byte for byte: its template, tab-indented, without the final newline.
     * Namespace and name are DNS labels, so Go's %q has nothing to escape in them.
     */
    static String body(String namespace, String name, int localEndpoints, boolean healthy) {
        return "{\n\t\"service\": {\n\t\t\"namespace\": \"" + namespace + "\",\n\t\t\"name\": \""
                + name + "\"\n\t},\n\t\"localEndpoints\": " + localEndpoints + ",\n\t\"serviceProxyHealthy\": "
                + healthy + "\n}";
    }

    /** The port's servers on each address, or none (said, and recorded on the Service) if one cannot listen. */
    private Entry open(int port, ServicePort s, List<InetSocketAddress> at) {
        AtomicInteger local = new AtomicInteger();
        String ns = s.id().namespace();
        String name = s.id().name();
        List<ProbeServer> opened = new ArrayList<>();
        InetSocketAddress where = null;
        try {
            for (InetSocketAddress a : at) {
                where = a;
                // The socket is made here, so in the namespace of the calling thread.
                ServerSocketChannel ch = netns == null ? ProbeServer.open(a) : netns.call(() -> ProbeServer.open(a));
                // Load balancers probe any path: every path answers. Node eligibility does not count here (kube-proxy's).
                opened.add(new ProbeServer("healthcheck-" + port, ch, Map.of(), req -> {
                    int n = local.get();
                    boolean healthy = health.status().healthy();
                    return Response.json(n > 0 && healthy ? 200 : 503, body(ns, name, n, healthy))
                            .withHeader("X-Load-Balancing-Endpoint-Weight", Integer.toString(n));
                }, ProbeServer.Limits.DEFAULT));
            }
            LOG.info("serving healthCheckNodePort {} of {}/{} on {}", port, ns, name, at.size() == 1
                    && at.get(0).getAddress().isAnyLocalAddress() ? "every address" : at);
            return new Entry(opened, at, ns, name, local);
        } catch (IOException | RuntimeException e) {
            opened.forEach(ProbeServer::close); // all or nothing, as kube-proxy
            String listen = where == null ? "" : "listen tcp " + Inet.format(where.getAddress()) + ":" + port + ": ";
            LOG.error("cannot serve healthCheckNodePort {} of service {}/{}: {}{}", port, ns, name, listen, e.getMessage());
            events.warning(EventRecorder.Regarding.service(ns, name), "FailedToStartServiceHealthcheck", "Listen",
                    "node " + config.hostname() + " failed to start healthcheck \"" + ns + "/" + name + "\" on port " + port
                            + ": " + listen + e.getMessage());
            return null;
        }
    }

    public synchronized int open() {
        return servers.size();
    }

    @Override
    public synchronized void close() {
        servers.values().forEach(Entry::close);
        servers.clear();
    }
}
