package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.proxy.manifest.Yaml;

/** Fields the objects' API types do not have, named by path: what the API server would drop. */
class KnownFieldsTest {
    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', value = {
        "SERVICE        | {spec: {clusterIP: 10.96.0.1, ports: [{port: 80, targetPort: 8080, nodePort: 30080}]}}  | ",
        "SERVICE        | {spec: {clusterIp: 10.96.0.1, ports: [{port: 80}, {port: 81, protocl: UDP}]}}  | spec.clusterIp spec.ports[1].protocl",
        "SERVICE        | {metadata: {name: a, labls: {}}, sepc: {}}                               | metadata.labls sepc",
        "SERVICE        | {status: {loadBalancer: {ingress: [{ip: 192.0.2.1, ipMode: VIP, ipp: x}]}}}  | status.loadBalancer.ingress[0].ipp",
        "ENDPOINT_SLICE | {addressType: IPv4, endpoints: [{addresses: [10.0.0.1], conditions: {ready: true, redy: true}, hints: {forZones: [{name: a}]}}]} | endpoints[0].conditions.redy",
        "ENDPOINT_SLICE | {ports: [{name: a, port: 1, protocol: TCP, appProtocol: http}], endpoint: []}  | endpoint",
        "NODE           | {spec: {podCIDRs: [10.244.0.0/24], taints: []}, status: {anything: 1}}  | ",
        "SERVICE_CIDR   | {spec: {cidrs: [10.96.0.0/16], cidr: x}}                                 | spec.cidr",
    })
    void unknownFieldsByPath(ObjectKey.Kind kind, String yaml, String expected) {
        Map<?, ?> tree = (Map<?, ?>) ((Map<?, ?>) Yaml.documents("o: " + yaml.trim() + "\n").get(0)).get("o");
        assertEquals(expected == null ? List.of() : List.of(expected.trim().split(" ")), KnownFields.unknown(kind, tree));
    }
}
