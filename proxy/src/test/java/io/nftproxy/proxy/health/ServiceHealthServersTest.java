package io.nftproxy.proxy.health;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * The healthCheckNodePort servers as a load balancer sees them, in this process's namespace on
 * free ports: opened for Local services, counting this node's ready endpoints, updated from the
 * changed services alone, closed with the service.
 */
class ServiceHealthServersTest {
    private final HealthState health = new HealthState(Clock.systemUTC(), Duration.ofSeconds(60));
    private final List<String> events = new ArrayList<>();
    private final ServiceHealthServers servers = new ServiceHealthServers(null, health, ProxyConfig.defaults("node-a"),
            (about, type, reason, action, note) -> events.add(String.join(" | ", about.toString(), type.api(), reason, action, note)));
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final Map<ServicePortName, ServicePort> services = new HashMap<>();
    private final Map<ServicePortName, List<Endpoint>> endpoints = new HashMap<>();

    @AfterEach
    void close() {
        servers.close();
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static ServicePort local(String name, int healthPort) {
        return ServicePort.builder(new ServicePortName("shop", name, "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.9"))).nodePort(30080)
                .loadBalancerIPs(List.of(Inet.parse("192.0.2.9"))).externalPolicyLocal(true)
                .healthCheckNodePort(healthPort).build();
    }

    static Endpoint ep(String ip, String node) {
        return Endpoint.ready(Inet.parse(ip), 8080, node);
    }

    private ProxyState state() {
        return new ProxyState(services, endpoints, NodeInfo.named("node-a"));
    }

    private HttpResponse<String> probe(int port) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz")).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** kube-proxy's body for default/my-svc with 2 local endpoints, byte for byte (its template, dedented, trimmed). */
    @Test
    void theBodyIsKubeProxysByteForByte() {
        assertEquals("{\n\t\"service\": {\n\t\t\"namespace\": \"default\",\n\t\t\"name\": \"my-svc\"\n\t},\n"
                + "\t\"localEndpoints\": 2,\n\t\"serviceProxyHealthy\": true\n}", ServiceHealthServers.body("default", "my-svc", 2, true));
    }

    static List<InetAddress> ips(String s) {
        return s.isEmpty() ? List.of() : Arrays.stream(s.split(" ")).map(Inet::parse).toList();
    }

    /** Where the servers listen: kube-proxy's service health server over the NodePort addresses. */
    @ParameterizedTest(name = "node-ip [{0}], Node [{1}], nodePortAddresses [{2}], local [{3}]: {4}")
    @CsvSource(delimiter = '|', value = {
        // nothing narrows NodePorts in either family: the wildcard (kube-proxy's 0.0.0.0, both families)
        "          |                  |             | 127.0.0.1 10.0.0.5         | 0.0.0.0",
        // primary IPv4, no IPv6 node IP: that IPv4, and every IPv6 address
        "10.0.0.5  |                  |             | 127.0.0.1 10.0.0.5 10.0.0.6 fd00::5 | 10.0.0.5 fd00::5",
        "          | 10.0.0.5 fd00::5 |             | 127.0.0.1 10.0.0.5 fd00::5 fd00::6 | 10.0.0.5 fd00::5",
        // kube-proxy's own test: nodePortAddresses 127.0.0.0/8 listens on 127.0.0.1
        "          |                  | 127.0.0.0/8 ::1/128 | 127.0.0.1 10.0.0.5 ::1   | 127.0.0.1 ::1",
        "          |                  | 10.0.0.0/8 fd00::/8 | 127.0.0.1 10.0.0.5 10.1.2.3 fd00::5 ::1 | 10.0.0.5 10.1.2.3 fd00::5",
    })
    void listensOnTheNodePortAddresses(String nodeIPs, String nodeAddrs, String npa, String local, String expected) {
        ProxyConfig cfg = ProxyConfig.builder("node-a").nodeIPs(ips(nodeIPs == null ? "" : nodeIPs.trim()))
                .nodePortAddresses(npa == null ? List.of() : Arrays.stream(npa.trim().split(" ")).map(Cidr::parse).toList())
                .table("t").build();
        NodeInfo node = new NodeInfo("node-a", null, ips(nodeAddrs == null ? "" : nodeAddrs.trim()), false);
        List<String> at = ServiceHealthServers.bindAddresses(cfg, node, () -> ips(local.trim()), 30999).stream()
                .map(a -> a.getAddress().isAnyLocalAddress() ? "0.0.0.0" : Inet.format(a.getAddress())).toList();
        assertEquals(List.of(expected.trim().split(" ")), at);
    }

    /** kube-proxy records a port it cannot serve on the Service, and goes on with the others. */
    @Test
    void aPortThatCannotBeServedIsRecordedOnTheService() throws Exception {
        try (ServerSocket taken = new ServerSocket(0)) {
            ServicePort cart = local("cart", taken.getLocalPort());
            services.put(cart.id(), cart);
            servers.update(state(), null);
            assertEquals(0, servers.open());
            assertEquals(1, events.size(), events.toString());
            assertTrue(events.get(0).startsWith("Regarding[kind=Service, namespace=shop, name=cart] | Warning"
                    + " | FailedToStartServiceHealthcheck | Listen | node node-a failed to start healthcheck \"shop/cart\" on port "
                    + taken.getLocalPort() + ": "), events.get(0));
        }
    }

    @Test
    void aLoadBalancerSeesThisNodesReadyEndpointsAsServicesChange() throws Exception {
        int port = freePort();
        ServicePort cart = local("cart", port);
        services.put(cart.id(), cart);
        endpoints.put(cart.id(), List.of(ep("10.244.1.5", "node-a"), ep("10.244.1.6", "node-a"), ep("10.244.2.7", "node-b")));
        health.synced();
        servers.update(state(), null);
        HttpResponse<String> r = probe(port);
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"localEndpoints\": 2"), r.body());
        assertEquals("2", r.headers().firstValue("X-Load-Balancing-Endpoint-Weight").orElse(""));

        // Another service changes: this one's server is not looked at, and keeps answering.
        int otherPort = freePort();
        ServicePort web = local("web", otherPort);
        services.put(web.id(), web);
        servers.update(state(), Set.of(web.id()));
        assertEquals(2, servers.open());
        assertEquals(503, probe(otherPort).statusCode(), "no endpoint of web on this node");
        assertEquals(200, probe(port).statusCode());

        // Its local endpoints go: 503, and the load balancer takes the node out.
        endpoints.put(cart.id(), List.of(ep("10.244.2.7", "node-b")));
        servers.update(state(), Set.of(cart.id()));
        r = probe(port);
        assertEquals(503, r.statusCode());
        assertTrue(r.body().contains("\"localEndpoints\": 0"), r.body());

        // The service goes: its port closes.
        services.remove(cart.id());
        endpoints.remove(cart.id());
        servers.update(state(), Set.of(cart.id()));
        assertEquals(1, servers.open());
        assertThrows(ConnectException.class, () -> probe(port));
    }

    @Test
    void anUnhealthyProxyFailsEveryProbe() throws Exception {
        int port = freePort();
        ServicePort cart = local("cart", port);
        services.put(cart.id(), cart);
        endpoints.put(cart.id(), List.of(ep("10.244.1.5", "node-a")));
        servers.update(state(), null);
        assertEquals(200, probe(port).statusCode());
        health.rulesMissing();
        HttpResponse<String> r = probe(port);
        assertEquals(503, r.statusCode());
        assertTrue(r.body().contains("\"serviceProxyHealthy\": false"), r.body());
    }

    @Test
    void twoServicesOnOnePortAreServedByTheFirstByName() throws Exception {
        int port = freePort();
        ServicePort b = local("b-second", port);
        ServicePort a = local("a-first", port);
        services.put(b.id(), b);
        services.put(a.id(), a);
        endpoints.put(b.id(), List.of(ep("10.244.1.5", "node-a")));
        servers.update(state(), null);
        assertEquals(1, servers.open());
        assertTrue(probe(port).body().contains("\"name\": \"a-first\""));

        // A policy back to Cluster gives up the port: b takes it over on that change alone.
        ServicePort cluster = a.toBuilder().externalPolicyLocal(false).healthCheckNodePort(0).build();
        services.put(a.id(), cluster);
        servers.update(state(), Set.of(a.id()));
        HttpResponse<String> r = probe(port);
        assertTrue(r.body().contains("\"name\": \"b-second\""), r.body());
        assertEquals(200, r.statusCode());
    }
}
