package io.nftproxy.proxy.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/** Endpoint selection, as a table: service policies × endpoint conditions → endpoints used. */
class EndpointSelectorTest {
    static final NodeInfo NODE = new NodeInfo("node-a", "z1", List.of(), false);

    /** "1.1.1.1@node-a" plus flags: R ready, S serving, T terminating; "h=z1|z2" zone hints; "n=node-a|node-b" node hints. */
    static Endpoint ep(String spec) {
        String[] parts = spec.split(" ");
        String ip = parts[0].substring(0, parts[0].indexOf('@'));
        String node = parts[0].substring(parts[0].indexOf('@') + 1);
        String flags = parts.length > 1 ? parts[1] : "RS";
        Set<String> hints = null;
        Set<String> nodeHints = null;
        for (int i = 2; i < parts.length; i++) {
            Set<String> names = Set.of(parts[i].substring(2).split("\\|"));
            if (parts[i].startsWith("h=")) {
                hints = names;
            } else {
                nodeHints = names;
            }
        }
        return Endpoint.builder(Inet.parse(ip), 80).node(node).ready(flags.contains("R")).serving(flags.contains("S"))
                .terminating(flags.contains("T")).zoneHints(hints).nodeHints(nodeHints).build();
    }

    static ServicePort svc(boolean nodePort, boolean eLocal, boolean iLocal) {
        return ServicePort.builder(new ServicePortName("ns", "s", "", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.1"))).nodePort(nodePort ? 30000 : 0).externalPolicyLocal(eLocal)
                .internalPolicyLocal(iLocal).build();
    }

    static List<String> ips(List<Endpoint> eps) {
        List<String> out = new ArrayList<>();
        eps.forEach(e -> out.add(Inet.format(e.address())));
        return out;
    }

    static Stream<Arguments> table() {
        return Stream.of(
                // description, nodePort, eTP Local, iTP Local, endpoints, cluster, local, any
                Arguments.of("ready endpoints are all used", false, false, false,
                        List.of("1.0.0.1@node-a", "1.0.0.2@node-b"), List.of("1.0.0.1", "1.0.0.2"), List.of(), true),
                Arguments.of("not ready endpoints are skipped", false, false, false,
                        List.of("1.0.0.1@node-a S", "1.0.0.2@node-b RS"), List.of("1.0.0.2"), List.of(), true),
                Arguments.of("no ready: serving-terminating fallback", false, false, false,
                        List.of("1.0.0.1@node-a ST", "1.0.0.2@node-b T", "1.0.0.3@node-b S"), List.of("1.0.0.1"), List.of(), true),
                Arguments.of("a ready endpoint wins over terminating ones", false, false, false,
                        List.of("1.0.0.1@node-a ST", "1.0.0.2@node-b RS"), List.of("1.0.0.2"), List.of(), true),
                Arguments.of("nothing usable", false, false, false,
                        List.of("1.0.0.1@node-a", "1.0.0.2@node-b T").subList(1, 2), List.of(), List.of(), false),
                Arguments.of("iTP Local: local ready only", false, false, true,
                        List.of("1.0.0.1@node-a", "1.0.0.2@node-b"), List.of(), List.of("1.0.0.1"), true),
                Arguments.of("iTP Local without local endpoints: none, but some exist", false, false, true,
                        List.of("1.0.0.2@node-b"), List.of(), List.of(), true),
                Arguments.of("iTP Local: local serving-terminating fallback", false, false, true,
                        List.of("1.0.0.1@node-a ST", "1.0.0.2@node-b"), List.of(), List.of("1.0.0.1"), true),
                Arguments.of("eTP Local NodePort: cluster for internal, local for external", true, true, false,
                        List.of("1.0.0.1@node-a", "1.0.0.2@node-b"), List.of("1.0.0.1", "1.0.0.2"), List.of("1.0.0.1"), true),
                Arguments.of("eTP Local without a NodePort or external IP changes nothing", false, true, false,
                        List.of("1.0.0.1@node-a", "1.0.0.2@node-b"), List.of("1.0.0.1", "1.0.0.2"), List.of(), true),
                Arguments.of("hints for our zone are honoured", false, false, false,
                        List.of("1.0.0.1@node-b RS h=z1", "1.0.0.2@node-b RS h=z2"), List.of("1.0.0.1"), List.of(), true),
                Arguments.of("hints are ignored unless every ready endpoint has them", false, false, false,
                        List.of("1.0.0.1@node-b RS h=z1", "1.0.0.2@node-b RS"), List.of("1.0.0.1", "1.0.0.2"), List.of(), true),
                Arguments.of("hints are ignored when none is for our zone", false, false, false,
                        List.of("1.0.0.1@node-b RS h=z2", "1.0.0.2@node-b RS h=z3"), List.of("1.0.0.1", "1.0.0.2"), List.of(), true),
                Arguments.of("node hints for this node are honoured (PreferSameNode)", false, false, false,
                        List.of("1.0.0.1@node-a RS h=z1 n=node-a", "1.0.0.2@node-b RS h=z1 n=node-b"), List.of("1.0.0.1"), List.of(), true),
                Arguments.of("node hints win over zone hints", false, false, false,
                        List.of("1.0.0.1@node-a RS h=z2 n=node-a", "1.0.0.2@node-b RS h=z1 n=node-b"), List.of("1.0.0.1"), List.of(), true),
                Arguments.of("node hints for other nodes only: zone hints decide", false, false, false,
                        List.of("1.0.0.1@node-c RS h=z1 n=node-c", "1.0.0.2@node-b RS h=z2 n=node-b"), List.of("1.0.0.1"), List.of(), true),
                Arguments.of("node hints ignored unless every ready endpoint has them", false, false, false,
                        List.of("1.0.0.1@node-a RS n=node-a", "1.0.0.2@node-b RS"), List.of("1.0.0.1", "1.0.0.2"), List.of(), true),
                Arguments.of("a not-ready endpoint without node hints does not count", false, false, false,
                        List.of("1.0.0.1@node-a RS n=node-a", "1.0.0.2@node-b S", "1.0.0.3@node-b RS n=node-b"), List.of("1.0.0.1"),
                        List.of(), true),
                Arguments.of("hints do not apply to local traffic policy (only to the cluster endpoints)", true, true, true,
                        List.of("1.0.0.1@node-a RS h=z2", "1.0.0.2@node-b RS h=z1"), List.of("1.0.0.2"), List.of("1.0.0.1"), true),
                // kube-proxy's UsesClusterEndpoints: a service taking external traffic keeps its
                // cluster endpoints even with both policies Local, for pods' and the node's own
                // traffic to its external frontends (short-circuited to every endpoint).
                Arguments.of("iTP and eTP Local with a NodePort: cluster endpoints for the short-circuit", true, true, true,
                        List.of("1.0.0.1@node-a", "1.0.0.2@node-b"), List.of("1.0.0.1", "1.0.0.2"), List.of("1.0.0.1"), true),
                Arguments.of("iTP Local without external frontends: no cluster endpoints", false, true, true,
                        List.of("1.0.0.1@node-a", "1.0.0.2@node-b"), List.of(), List.of("1.0.0.1"), true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void selects(String description, boolean nodePort, boolean eLocal, boolean iLocal, List<String> endpoints,
                 List<String> cluster, List<String> local, boolean any) {
        List<Endpoint> eps = endpoints.stream().map(EndpointSelectorTest::ep).toList();
        EndpointSelection s = EndpointSelector.select(svc(nodePort, eLocal, iLocal), eps, NODE);
        assertEquals(cluster, ips(s.cluster()), "cluster endpoints");
        assertEquals(local, ips(s.local()), "local endpoints");
        assertEquals(any, s.anyEndpoints(), "any endpoints");
    }

    /** Nodes whose zone (or name) is missing: hints for absent zones are ignored, never a failure. */
    static Stream<Arguments> nodesWithoutZone() {
        NodeInfo noZone = new NodeInfo("node-a", null, List.of(), false);
        NodeInfo emptyZone = new NodeInfo("node-a", "", List.of(), false);
        NodeInfo unnamed = new NodeInfo(null, null, List.of(), false);
        return Stream.of(
                Arguments.of("no zone label: zone hints ignored", noZone,
                        List.of("1.0.0.1@node-b RS h=z1", "1.0.0.2@node-b RS h=z2"), List.of("1.0.0.1", "1.0.0.2")),
                Arguments.of("empty zone label: zone hints ignored", emptyZone,
                        List.of("1.0.0.1@node-b RS h=z1", "1.0.0.2@node-b RS h=z2"), List.of("1.0.0.1", "1.0.0.2")),
                Arguments.of("no zone label, hints on some endpoints only", noZone,
                        List.of("1.0.0.1@node-b RS h=z1", "1.0.0.2@node-b RS"), List.of("1.0.0.1", "1.0.0.2")),
                Arguments.of("no zone label, node hints for this node still honoured", noZone,
                        List.of("1.0.0.1@node-a RS h=z1 n=node-a", "1.0.0.2@node-b RS h=z2 n=node-b"), List.of("1.0.0.1")),
                Arguments.of("no zone label, node hints for other nodes: everything", noZone,
                        List.of("1.0.0.1@node-c RS h=z1 n=node-c", "1.0.0.2@node-b RS h=z2 n=node-b"), List.of("1.0.0.1", "1.0.0.2")),
                Arguments.of("node not known by name: every hint ignored", unnamed,
                        List.of("1.0.0.1@node-a RS h=z1 n=node-a", "1.0.0.2@node-b RS h=z2 n=node-b"), List.of("1.0.0.1", "1.0.0.2")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("nodesWithoutZone")
    void hintsNeverFailOnANodeWithoutZone(String description, NodeInfo node, List<String> endpoints, List<String> cluster) {
        List<Endpoint> eps = endpoints.stream().map(EndpointSelectorTest::ep).toList();
        EndpointSelection s = EndpointSelector.select(svc(false, false, false), eps, node);
        assertEquals(cluster, ips(s.cluster()), "cluster endpoints");
        assertEquals(!cluster.isEmpty(), s.anyEndpoints(), "any endpoints");
    }
}
