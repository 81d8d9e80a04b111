package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.manifest.Json;
import io.nftproxy.proxy.manifest.Yaml;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.source.KubeObject.ServiceRecord;
import io.nftproxy.proxy.source.KubeObject.SliceRecord;

/** Kubernetes objects to the compact model: the defaulting rules, and one result whatever the format. */
class KubeModelTest {
    private static final String OBJECTS = """
            apiVersion: v1
            kind: Service
            metadata:
              name: web
              namespace: shop
              annotations: {note: ignored}
            spec:
              type: LoadBalancer
              clusterIP: 10.96.0.10
              clusterIPs: [10.96.0.10, fd00::10]
              externalIPs: [192.0.2.7]
              externalTrafficPolicy: Local
              healthCheckNodePort: 32000
              sessionAffinity: ClientIP
              sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}
              loadBalancerSourceRanges: [203.0.113.0/24]
              ports:
              - {name: http, port: 80, targetPort: 8080, nodePort: 30080}
              - {name: dns, port: 53, protocol: UDP, nodePort: 30053}
            status:
              loadBalancer:
                ingress:
                - ip: 198.51.100.1
                - ip: 198.51.100.2
                  ipMode: Proxy
            ---
            apiVersion: discovery.k8s.io/v1
            kind: EndpointSlice
            metadata:
              name: web-abc
              namespace: shop
              labels: {kubernetes.io/service-name: web}
              annotations: {endpoints.kubernetes.io/last-change-trigger-time: "2026-11-22T10:00:00Z"}
            addressType: IPv4
            ports:
            - {name: http, port: 8080}
            - {name: dns, port: 5353, protocol: UDP}
            endpoints:
            - addresses: [10.244.1.2]
              nodeName: node-a
              zone: z1
              conditions: {ready: true}
              hints: {forZones: [{name: z1}], forNodes: [{name: node-a}]}
            - addresses: [10.244.2.2]
              nodeName: node-b
              conditions: {ready: false, serving: true, terminating: true}
            - addresses: [10.244.3.2]
            ---
            apiVersion: v1
            kind: Node
            metadata:
              name: node-a
              labels: {topology.kubernetes.io/zone: z1}
            spec: {podCIDR: 10.244.2.0/24, podCIDRs: [10.244.2.0/24, "fd00:244:2::/64"]}
            status:
              addresses:
              - {type: Hostname, address: node-a}
              - {type: InternalIP, address: 192.168.50.2}
              - {type: InternalIP, address: 192.168.50.3}
              - {type: InternalIP, address: fd00:50::2}
            """;

    private static List<KubeObject> convert(List<Object> docs) {
        List<KubeObject> out = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        docs.forEach(d -> out.addAll(KubeModel.objects(d, problems::add)));
        assertEquals(List.of(), problems);
        return out;
    }

    @Test
    void yamlJsonAndInformerObjectsGiveTheSameModel() {
        List<Object> yamlDocs = Yaml.documents(OBJECTS);
        List<KubeObject> fromYaml = convert(yamlDocs);
        assertEquals(3, fromYaml.size());

        // The same objects as JSON, written by Jackson from the YAML's trees.
        KubernetesSerialization json = new KubernetesSerialization();
        StringBuilder text = new StringBuilder();
        for (Object d : yamlDocs) {
            text.append(json.asJson(d)).append('\n');
        }
        assertEquals(fromYaml, convert(Json.documents(text.toString())));

        // And as fabric8's typed objects, as an informer delivers them, read as KubernetesSource reads them.
        List<KubeObject> typed = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (Object d : yamlDocs) {
            HasMetadata obj = json.unmarshal(json.asJson(d));
            typed.add(KubeModel.object(obj, ProxySelection.DEFAULT, problems::add));
        }
        assertEquals(List.of(), problems);
        assertEquals(fromYaml, typed);
    }

    @Test
    void serviceFieldsAndDefaults() {
        ServiceRecord svc = (ServiceRecord) convert(Yaml.documents(OBJECTS)).get(0);
        assertNull(svc.error());
        ServicePort http = svc.ports().get(0);
        assertEquals(new ServicePortName("shop", "web", "http", Protocol.TCP), http.id());
        assertEquals(List.of(Inet.parse("10.96.0.10"), Inet.parse("fd00::10")), http.clusterIPs());
        assertEquals(30080, http.nodePort());
        assertEquals(List.of(Inet.parse("198.51.100.1")), http.loadBalancerIPs(), "ipMode Proxy is not ours");
        assertTrue(http.externalPolicyLocal());
        assertEquals(60, http.affinitySeconds());
        assertEquals(32000, http.healthCheckNodePort());
        assertEquals(Protocol.UDP, svc.ports().get(1).protocol());
    }

    @Test
    void endpointConditionsAsKubeProxyReadsThem() {
        SliceRecord slice = (SliceRecord) convert(Yaml.documents(OBJECTS)).get(1);
        assertEquals(new ObjectKey(ObjectKey.Kind.SERVICE, "shop", "web"), slice.service());
        assertEquals(Instant.parse("2026-11-22T10:00:00Z"), slice.triggerTime());
        List<Endpoint> http = slice.endpoints().get(new ServicePortName("shop", "web", "http", Protocol.TCP));
        assertEquals(3, http.size());
        assertEquals(Set.of("z1"), http.get(0).zoneHints());
        Endpoint terminating = http.get(1);
        assertTrue(!terminating.ready() && terminating.serving() && terminating.terminating());
        Endpoint bare = http.get(2); // no conditions at all: ready and serving, not terminating
        assertTrue(bare.ready() && bare.serving() && !bare.terminating());
        assertEquals(5353, slice.endpoints().get(new ServicePortName("shop", "web", "dns", Protocol.UDP)).get(0).port());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "absent serving follows kube-proxy (true)  | {ready: false, terminating: true}  | false | true  | true",
        "serving false                             | {ready: false, serving: false}     | false | false | false",
        "quoted booleans                           | {ready: 'true', serving: 'false'}  | true  | false | false",
        "YAML 1.1 booleans, as kubectl reads them  | {ready: yes, serving: On, terminating: n} | true | true | false",
        "YAML 1.1 false forms                      | {ready: no, serving: off, terminating: Y}  | false | false | true",
        "no conditions                             | {}                                 | true  | true  | false"})
    void conditionTable(String name, String conditions, boolean ready, boolean serving, boolean terminating) {
        String text = "kind: EndpointSlice\nmetadata: {name: s, labels: {kubernetes.io/service-name: x}}\naddressType: IPv4\n"
                + "ports: [{port: 80}]\nendpoints:\n- {addresses: [10.0.0.1], conditions: " + conditions + "}\n";
        SliceRecord s = (SliceRecord) convert(Yaml.documents(text)).get(0);
        Endpoint e = s.endpoints().values().iterator().next().get(0);
        assertEquals(List.of(ready, serving, terminating), List.of(e.ready(), e.serving(), e.terminating()), name);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "namespace absent is default        | metadata: {name: a}                  | default/a",
        "namespace empty is default         | 'metadata: {name: a, namespace: \"\"}' | default/a",
        "namespace given                    | metadata: {name: a, namespace: n}    | n/a"})
    void oneNamespaceRule(String name, String metadata, String path) {
        String text = "kind: Service\n" + metadata + "\nspec: {clusterIP: 10.96.0.1, ports: [{port: 80}]}\n";
        assertEquals(path, convert(Yaml.documents(text)).get(0).key().path(), name);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "bad cluster IP        | {clusterIP: 10.96.0.300, ports: [{port: 80}]}                 | invalid cluster IP '10.96.0.300'",
        "port out of range     | {clusterIP: 10.96.0.1, ports: [{port: 70000}]}                | port 70000 is out of range",
        "port not a number     | {clusterIP: 10.96.0.1, ports: [{port: http}]}                 | port 'http' is not a number",
        "unknown protocol      | {clusterIP: 10.96.0.1, ports: [{port: 80, protocol: ICMP}]}   | unknown protocol 'ICMP'",
        "no ports              | {clusterIP: 10.96.0.1}                                         | has no ports",
        "duplicated port       | {clusterIP: 10.96.0.1, ports: [{port: 80}, {port: 80}]}       | port 80/TCP is listed twice",
        "affinity out of range | {clusterIP: 10.96.0.1, sessionAffinity: ClientIP, sessionAffinityConfig: {clientIP: {timeoutSeconds: 0}}, ports: [{port: 80}]} | timeoutSeconds 0",
        "ports not a list      | {clusterIP: 10.96.0.1, ports: 80}                              | spec.ports is not a list"})
    void badServicesNameTheObjectAndTheReason(String name, String spec, String reason) {
        String text = "kind: Service\nmetadata: {name: bad, namespace: ns}\nspec: " + spec + "\n";
        ServiceRecord r = (ServiceRecord) convert(Yaml.documents(text)).get(0);
        assertTrue(r.ports().isEmpty(), name);
        assertTrue(r.error().startsWith("Service ns/bad: ") && r.error().contains(reason), name + ": " + r.error());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "bad source range      | {type: LoadBalancer, clusterIP: 10.96.0.1, loadBalancerSourceRanges: [10.0.0.0/40], ports: [{port: 80}]} | invalid loadBalancerSourceRanges entry '10.0.0.0/40'"})
    void badLoadBalancerServicesNameTheObjectAndTheReason(String name, String spec, String reason) {
        badServicesNameTheObjectAndTheReason(name, spec, reason);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "endpoint not a mapping | endpoints: [10.0.0.1, {addresses: [10.0.0.2]}] % ports: [{port: 80}]                       | an endpoint that is not a mapping (skipped) | 1",
        "port not a mapping     | endpoints: [{addresses: [10.0.0.2]}] % ports: [80, {name: b, port: 81}]                 | a port that is not a mapping (skipped)      | 1",
        "port with bad protocol | endpoints: [{addresses: [10.0.0.2]}] % ports: [{port: 80, protocol: GRE}, {name: b, port: 81}] | (expected TCP, UDP or SCTP) (port skipped) | 1"})
    void aBadPartOfASliceIsSkippedAndNamed(String name, String body, String reason, int portsKept) {
        String text = "kind: EndpointSlice\nmetadata: {name: s, namespace: ns, labels: {kubernetes.io/service-name: x}}\n"
                + "addressType: IPv4\n" + body.replace(" % ", "\n") + "\n"; // % separates the lines of a row
        SliceRecord r = (SliceRecord) KubeModel.objects(Yaml.documents(text).get(0), e -> { }).get(0);
        assertEquals(portsKept, r.endpoints().size(), name + ": " + r.endpoints());
        assertTrue(r.errors().stream().anyMatch(e -> e.startsWith("EndpointSlice ns/s: ") && e.contains(reason)),
                name + ": " + r.errors());
    }

    @Test
    void slicesThatServeNoServiceAreKeptEmpty() {
        String fqdn = "kind: EndpointSlice\nmetadata: {name: f, labels: {kubernetes.io/service-name: x}}\naddressType: FQDN\n"
                + "ports: [{port: 80}]\nendpoints: [{addresses: [db.example.com]}]\n";
        assertTrue(((SliceRecord) convert(Yaml.documents(fqdn)).get(0)).endpoints().isEmpty(), "FQDN slices are not proxied");
        String unowned = "kind: EndpointSlice\nmetadata: {name: u}\naddressType: IPv4\nports: [{port: 80}]\n"
                + "endpoints: [{addresses: [10.0.0.1]}]\n";
        SliceRecord u = (SliceRecord) convert(Yaml.documents(unowned)).get(0);
        assertTrue(u.endpoints().isEmpty() && u.service() == null, "no kubernetes.io/service-name label, no service");
    }

    @Test
    void documentsThatAreNoObjectAreNamedAndSkipped() {
        List<String> problems = new ArrayList<>();
        assertTrue(KubeModel.objects(List.of("a", "list"), problems::add).isEmpty());
        assertTrue(KubeModel.objects(Map.of("metadata", Map.of("name", "x")), problems::add).isEmpty());
        assertEquals(List.of("a document that is not a mapping (skipped)", "an object without kind (skipped)"), problems);
    }

    @Test
    void headlessAndExternalNameServicesHaveNoPorts() {
        for (String spec : List.of("{clusterIP: None, ports: [{port: 80}]}", "{type: ExternalName, externalName: x.example}")) {
            ServiceRecord r = (ServiceRecord) convert(Yaml.documents("kind: Service\nmetadata: {name: h}\nspec: " + spec)).get(0);
            assertEquals(List.of(), r.ports());
            assertNull(r.error());
        }
    }

    @Test
    void badEndpointsAreSkippedTheRestKept() {
        String text = "kind: EndpointSlice\nmetadata: {name: s, namespace: n, labels: {kubernetes.io/service-name: x}}\n"
                + "addressType: IPv4\nports: [{port: 80}, {port: 99999}]\n"
                + "endpoints:\n- {addresses: [10.0.0.1]}\n- {addresses: [not-an-ip]}\n- {addresses: ['fd00::1']}\n";
        SliceRecord s = (SliceRecord) convert(Yaml.documents(text)).get(0);
        assertEquals(1, s.endpoints().size());
        assertEquals(1, s.endpoints().values().iterator().next().size());
        assertEquals(3, s.errors().size(), s.errors().toString());
        assertTrue(s.errors().get(0).contains("invalid endpoint address 'not-an-ip'"), s.errors().toString());
    }

    @Test
    void listsAndUnknownKindsAndUnnamedObjects() {
        String text = "kind: ServiceList\nitems:\n- metadata: {name: a}\n  spec: {clusterIP: 10.96.0.1, ports: [{port: 80}]}\n"
                + "---\nkind: List\nitems:\n- {kind: ConfigMap, metadata: {name: c}}\n- {kind: Service, spec: {}}\n";
        List<String> problems = new ArrayList<>();
        List<KubeObject> out = new ArrayList<>();
        Yaml.documents(text).forEach(d -> out.addAll(KubeModel.objects(d, problems::add)));
        assertEquals(1, out.size());
        assertEquals("Service default/a", out.get(0).key().toString());
        assertEquals(List.of("a Service without metadata.name (skipped)"), problems);
    }

    /** kube-proxy's NodeEligible: a node being deleted or tainted by the cluster autoscaler is leaving; other taints are not. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{name: n}                                              | {}                                                       | false",
            "{name: n, deletionTimestamp: '2026-07-24T10:00:00Z'}   | {}                                                       | true",
            "{name: n}   | {taints: [{key: ToBeDeletedByClusterAutoscaler, value: '1753351200', effect: NoSchedule}]}  | true",
            "{name: n}   | {taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]}                    | false"})
    void aLeavingNode(String metadata, String spec, boolean leaving) {
        List<KubeObject> out = new ArrayList<>();
        Yaml.documents("kind: Node\nmetadata: " + metadata.trim() + "\nspec: " + spec.trim() + "\n")
                .forEach(d -> out.addAll(KubeModel.objects(d, p -> { })));
        assertEquals(leaving, ((KubeObject.NodeRecord) out.get(0)).node().deleting());
    }

    @Test
    void aNodesPodCidrsComeFromPodCidrsElsePodCidr() {
        List<String> problems = new ArrayList<>();
        Function<String, List<String>> cidrs = spec -> {
            List<KubeObject> out = new ArrayList<>();
            Yaml.documents("kind: Node\nmetadata: {name: n}\nspec: " + spec + "\n")
                    .forEach(d -> out.addAll(KubeModel.objects(d, problems::add)));
            return ((KubeObject.NodeRecord) out.get(0)).node().podCIDRs().stream().map(Object::toString).toList();
        };
        assertEquals(List.of("10.244.2.0/24", "fd00:244:2::/64"), cidrs.apply("{podCIDR: 10.244.2.0/24, podCIDRs: [10.244.2.0/24, \"fd00:244:2::/64\"]}"));
        assertEquals(List.of("10.244.7.0/24"), cidrs.apply("{podCIDR: 10.244.7.0/24}"));
        assertEquals(List.of(), cidrs.apply("{}"));
        assertEquals(List.of("10.244.8.0/24"), cidrs.apply("{podCIDRs: [not-a-cidr, 10.244.8.0/24]}"), "a malformed one is skipped");
        assertEquals(List.of(), problems);
    }

    @Test
    void zoneAndNodeHintsReachEveryPortsEndpoints() {
        String text = "kind: EndpointSlice\nmetadata: {name: s-1, namespace: ns, labels: {kubernetes.io/service-name: s}}\n"
                + "addressType: IPv4\nports: [{name: a, port: 80}, {name: b, port: 81}]\n"
                + "endpoints:\n- addresses: [10.244.0.1]\n  hints: {forZones: [{name: z1}], forNodes: [{name: node-a}]}\n";
        List<KubeObject> out = new ArrayList<>();
        Yaml.documents(text).forEach(d -> out.addAll(KubeModel.objects(d, p -> { })));
        KubeObject.SliceRecord s = (KubeObject.SliceRecord) out.get(0);
        assertEquals(2, s.endpoints().size());
        for (List<Endpoint> eps : s.endpoints().values()) {
            assertEquals(Set.of("z1"), eps.get(0).zoneHints());
            assertEquals(Set.of("node-a"), eps.get(0).nodeHints());
        }
    }
}
