package io.nftproxy.proxy.kernel;

import static io.nftproxy.sandbox.Sandbox.Outcome.Result.ANSWERED;
import static io.nftproxy.sandbox.Sandbox.Outcome.Result.REFUSED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.sandbox.Netns;

/**
 * Which endpoint answers: ClientIP session affinity, serving-terminating fallback, topology hints,
 * IPv6, and SCTP (programmed; this kernel has no SCTP sockets to send with).
 */
class EndpointChoiceKernelTest {
    static Topology topo;
    static Path manifests;
    static final List<String> CLIENTS = List.of("10.244.2.100", "10.244.2.101", "10.244.2.102", "10.244.2.103",
            "10.244.2.104", "10.244.2.105", "10.244.2.106", "10.244.2.107");
    static Netns clients;
    static Netns client6;

    @BeforeAll
    static void setUp(@TempDir Path dir) throws Exception {
        manifests = dir;
        topo = new Topology();
        for (String ep : new String[] {"10.244.1.2", "10.244.1.3", "10.244.1.4", "10.244.1.5", "10.244.1.6"}) {
            topo.serve(ep, 8080);
        }
        topo.pod("10.244.3.2", "fd00:244::32");
        topo.pod("10.244.3.3", "fd00:244::33");
        topo.serve("10.244.3.2", 8080);
        topo.serve("10.244.3.3", 8080);
        topo.serve("fd00:244::32", 8080);
        topo.serve("fd00:244::33", 8080);
        clients = topo.pod(CLIENTS.toArray(new String[0]));
        client6 = topo.pod("fd00:244::100");
        String http = "[{name: http, port: 8080, protocol: TCP}]";
        new Manifests()
                .service("sticky", "10.96.0.30", "[{name: http, port: 80}]", "sessionAffinity: ClientIP",
                        "sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}")
                .slice("sticky", "a", "IPv4", http, "10.244.1.2@node-a", "10.244.1.3@node-b", "10.244.1.4@node-b")
                .service("terminating", "10.96.0.31", "[{name: http, port: 80}]")
                .slice("terminating", "a", "IPv4", http, "10.244.1.5@node-b[ready=false,serving=true,terminating=true]",
                        "10.244.1.6@node-b[ready=false,serving=false,terminating=true]")
                .service("zoned", "10.96.0.32", "[{name: http, port: 80}]")
                .slice("zoned", "a", "IPv4", http, "10.244.1.2@node-b[zone=z1,hints=z1]", "10.244.1.3@node-b[zone=z2,hints=z2]")
                .service("dual", "10.96.0.33,fd00:96::33", "[{name: http, port: 80}]", "ipFamilies: [IPv4, IPv6]")
                .slice("dual", "v4", "IPv4", http, "10.244.3.2@node-b", "10.244.3.3@node-b")
                .slice("dual", "v6", "IPv6", http, "fd00:244::32@node-b", "fd00:244::33@node-b")
                .service("empty6", "fd00:96::34", "[{name: http, port: 80}]")
                .service("diameter", "10.96.0.35", "[{name: diameter, port: 3868, protocol: SCTP}]")
                .slice("diameter", "a", "IPv4", "[{name: diameter, port: 3868, protocol: SCTP}]", "10.244.1.2@node-b")
                .raw("apiVersion: v1\nkind: Node\nmetadata:\n  name: node-a\n  labels: {topology.kubernetes.io/zone: z1}\n"
                        + "status:\n  addresses: [{type: InternalIP, address: " + Topology.NODE_IP + "}]\n")
                .write(dir, "services.yaml");
        ProxyRun.once(topo, dir);
    }

    @AfterAll
    static void tearDown() {
        if (topo != null) {
            topo.close();
        }
    }

    @Test
    void clientIpAffinityKeepsEachClientOnOneEndpoint() throws Exception {
        Set<String> overall = new HashSet<>();
        for (String c : CLIENTS) {
            Set<String> mine = new HashSet<>();
            for (int i = 0; i < 6; i++) {
                Topology.Outcome o = topo.tcp(clients, c, "10.96.0.30", 80);
                assertEquals(ANSWERED, o.result(), o.toString());
                mine.add(o.answeredBy());
            }
            assertEquals(1, mine.size(), "client " + c + " sticks to one endpoint: " + mine);
            overall.addAll(mine);
        }
        assertTrue(overall.size() >= 2, "different clients spread over endpoints: " + overall);
    }

    @Test
    void servingTerminatingEndpointsAreUsedWhenNoneIsReady() throws Exception {
        for (int i = 0; i < 8; i++) {
            Topology.Outcome o = topo.tcp(clients, CLIENTS.get(0), "10.96.0.31", 80);
            assertEquals("10.244.1.5:8080", o.answeredBy(), "only the serving one: " + o);
        }
    }

    @Test
    void topologyHintsKeepTrafficInTheNodesZone() throws Exception {
        for (int i = 0; i < 12; i++) {
            Topology.Outcome o = topo.tcp(clients, CLIENTS.get(1), "10.96.0.32", 80);
            assertEquals("10.244.1.2:8080", o.answeredBy(), "hinted for zone z1: " + o);
        }
    }

    @Test
    void dualStackServesBothFamilies() throws Exception {
        Set<String> v4 = new HashSet<>();
        Set<String> v6 = new HashSet<>();
        for (int i = 0; i < 20; i++) {
            v4.add(topo.tcp(clients, CLIENTS.get(2), "10.96.0.33", 80).answeredBy());
            Topology.Outcome o = topo.tcp(client6, "fd00:244::100", "fd00:96::33", 80);
            assertEquals(ANSWERED, o.result(), o.toString());
            assertEquals(InetAddress.getByName("fd00:244::100"), InetAddress.getByName(o.peerSeen()),
                    "pod traffic keeps its IPv6 source");
            v6.add(o.answeredBy());
        }
        assertEquals(Set.of("10.244.3.2:8080", "10.244.3.3:8080"), v4);
        assertEquals(Set.of("[fd00:244::32]:8080", "[fd00:244::33]:8080"), v6);
        Topology.Outcome ext6 = topo.tcp(topo.ext, null, "fd00:96::33", 80);
        assertEquals(ANSWERED, ext6.result(), "from outside over IPv6: " + ext6);
        assertEquals(REFUSED, topo.tcp(client6, "fd00:244::100", "fd00:96::34", 80).result(), "IPv6 without endpoints");
    }

    @Test
    void sctpServicesAreProgrammed() throws Exception {
        try (NftClient c = NftClient.open(topo.node.ns())) {
            String rules = c.readTable(Family.IP, "nftproxy").toString();
            assertTrue(rules.contains("10.96.0.35 . sctp . 3868 comment \"default/diameter:diameter\""), rules);
            assertTrue(rules.contains("10.96.0.35 . sctp . 3868 . 0x00000000 comment \"default/diameter:diameter\" : 10.244.1.2 . 3868"), rules);
            NftSet services = c.listSets(Family.IP, "nftproxy").stream().filter(s -> s.name().equals("service-ips"))
                    .findFirst().orElseThrow();
            assertEquals(List.of(DataType.IPV4_ADDR, DataType.INET_PROTO, DataType.INET_SERVICE), services.key());
        }
    }
}
