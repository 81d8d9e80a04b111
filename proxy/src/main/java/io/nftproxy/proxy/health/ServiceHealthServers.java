package io.nftproxy.proxy.health;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.proxy.events.EventRecorder;
import io.nftproxy.proxy.http.ProbeServer;
import io.nftproxy.proxy.http.ProbeServer.Response;
import io.nftproxy.proxy.model.Endpoint;
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

    private record Entry(ProbeServer server, String namespace, String name, AtomicInteger local) {
    }

    private final NetNamespace netns;
    private final HealthState health;
    private final String hostname;
    private final EventRecorder events;
    private final Map<Integer, Entry> servers = new HashMap<>();

    /** {@code events} hears of a port that cannot be served, named after {@code hostname}, as kube-proxy records it. */
    public ServiceHealthServers(NetNamespace netns, HealthState health, String hostname, EventRecorder events) {
        this.netns = netns;
        this.health = health;
        this.hostname = hostname;
        this.events = events;
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
        servers.entrySet().removeIf(e -> {
            ServicePort s = wanted.get(e.getKey());
            if (s == null || !s.id().namespace().equals(e.getValue().namespace()) || !s.id().name().equals(e.getValue().name())) {
                e.getValue().server().close();
                LOG.info("closed healthCheckNodePort {} of {}/{}", e.getKey(), e.getValue().namespace(), e.getValue().name());
                return true;
            }
            return false;
        });
        for (Map.Entry<Integer, ServicePort> w : wanted.entrySet()) {
            Entry e = servers.get(w.getKey());
            if (e == null) {
                e = open(w.getKey(), w.getValue());
                if (e == null) {
                    continue;
                }
                servers.put(w.getKey(), e);
            }
            e.local().set(localCounts.get(w.getKey()));
        }
    }

    private Entry open(int port, ServicePort s) {
        AtomicInteger local = new AtomicInteger();
        String ns = s.id().namespace();
        String name = s.id().name();
        try {
            // The socket is made here, so in the namespace of the calling thread.
            ServerSocketChannel ch = netns == null ? ProbeServer.open(new InetSocketAddress(port))
                    : netns.call(() -> ProbeServer.open(new InetSocketAddress(port)));
            // Load balancers probe any path: every path answers.
            ProbeServer server = new ProbeServer("healthcheck-" + port, ch, Map.of(), req -> {
                int n = local.get();
                boolean healthy = health.status().healthy();
                int code = n > 0 && healthy ? 200 : 503;
                return Response.json(code, "{\"service\": {\"namespace\": \"" + ns + "\", \"name\": \"" + name
                        + "\"}, \"localEndpoints\": " + n + ", \"serviceProxyHealthy\": " + healthy + "}")
                        .withHeader("X-Load-Balancing-Endpoint-Weight", Integer.toString(n));
            }, ProbeServer.Limits.DEFAULT);
            LOG.info("serving healthCheckNodePort {} of {}/{}", port, ns, name);
            return new Entry(server, ns, name, local);
        } catch (IOException | RuntimeException e) {
            LOG.error("cannot serve healthCheckNodePort {} of service {}/{}: {}", port, ns, name, e.getMessage());
            events.warning(EventRecorder.Regarding.service(ns, name), "FailedToStartServiceHealthcheck", "Listen",
                    "node " + hostname + " failed to start healthcheck \"" + ns + "/" + name + "\" on port " + port + ": "
                            + e.getMessage());
            return null;
        }
    }

    public synchronized int open() {
        return servers.size();
    }

    @Override
    public synchronized void close() {
        servers.values().forEach(e -> e.server().close());
        servers.clear();
    }
}
