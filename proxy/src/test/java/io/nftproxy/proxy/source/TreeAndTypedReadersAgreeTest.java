package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDR;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import io.nftproxy.proxy.manifest.Yaml;

/**
 * A manifest's tree and an informer's typed object go through the same reader of each kind by two
 * views: the same object must give the same record either way, errors included. Every object of
 * every conformance scenario and of the demo, and the cases where the two representations differ
 * most (absent against empty lists, absent conditions, hints, the ipMode of a load balancer, a
 * label that takes an object out of our selection, values the reader refuses).
 */
class TreeAndTypedReadersAgreeTest {
    private static final KubernetesSerialization JSON = new KubernetesSerialization();

    static Stream<Path> manifests() throws IOException {
        Path scenarios = Path.of("..", "conformance", "scenarios");
        Path demo = Path.of("src", "main", "resources", "io", "nftproxy", "demo", "services.yaml");
        try (Stream<Path> s = Files.list(scenarios)) {
            List<Path> all = new ArrayList<>(s.filter(p -> p.toString().endsWith(".yaml")).sorted().toList());
            all.add(demo);
            return all.stream();
        }
    }

    @ParameterizedTest
    @MethodSource("manifests")
    void everyObjectOfAManifestReadsTheSameTyped(Path manifest) throws IOException {
        String text = Files.readString(manifest);
        if (manifest.startsWith(Path.of("..", "conformance"))) {
            text = (String) ((Map<?, ?>) Yaml.documents(text).get(0)).get("manifests"); // a scenario holds its manifests as text
        }
        int compared = compareAll(text, ProxySelection.DEFAULT);
        assertTrue(compared > 0, manifest + " holds no object the proxy reads");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        // Hints: absent, empty, for zones and nodes; conditions absent or partly given; no address.
        """
        kind: EndpointSlice
        metadata: {name: s, namespace: ns, labels: {kubernetes.io/service-name: web},
          annotations: {endpoints.kubernetes.io/last-change-trigger-time: "2026-01-02T03:04:05Z"}}
        addressType: IPv4
        endpoints:
        - {addresses: [10.244.1.2], nodeName: a, zone: z1, hints: {forZones: [{name: z1}], forNodes: [{name: a}]}}
        - {addresses: [10.244.1.3], hints: {forZones: []}, conditions: {ready: false, serving: true, terminating: true}}
        - {addresses: [10.244.1.4], conditions: {}}
        - {addresses: []}
        - {addresses: [10.244.1.300]}
        - {addresses: ["fd00::1"]}
        ports: [{name: http, port: 8080, protocol: TCP}, {port: 70000}, {name: dns, port: 53, protocol: UDP}]
        """,
        // A slice without its service's label, and one of an address type kube-proxy does not proxy.
        "kind: EndpointSlice\nmetadata: {name: s, namespace: ns}\naddressType: IPv4\nendpoints: [{addresses: [10.0.0.1]}]\n",
        "kind: EndpointSlice\nmetadata: {name: s, labels: {kubernetes.io/service-name: web}}\naddressType: FQDN\n"
                + "endpoints: [{addresses: [example.com]}]\nports: [{port: 80}]\n",
        // A load balancer: ingress IPs with and without ipMode Proxy, source ranges, policies, affinity.
        """
        kind: Service
        metadata: {name: lb, namespace: ns}
        spec:
          type: LoadBalancer
          clusterIPs: [10.96.0.9, "fd00:96::9"]
          externalIPs: [192.0.2.1]
          loadBalancerSourceRanges: [203.0.113.0/24]
          externalTrafficPolicy: Local
          internalTrafficPolicy: Local
          healthCheckNodePort: 32000
          sessionAffinity: ClientIP
          sessionAffinityConfig: {clientIP: {timeoutSeconds: 60}}
          ports: [{name: a, port: 80, nodePort: 30080}, {name: b, port: 53, protocol: UDP, nodePort: 30053}]
        status: {loadBalancer: {ingress: [{ip: 203.0.113.7}, {ip: 203.0.113.8, ipMode: Proxy}, {hostname: lb.example}]}}
        """,
        // The load-balancing annotation: an algorithm, and a value that names none (a warning).
        "kind: Service\nmetadata: {name: a, annotations: {service.nftproxy.io/lb-algorithm: maglev}}\n"
                + "spec: {clusterIP: 10.96.0.3, ports: [{port: 80}]}\n",
        "kind: Service\nmetadata: {name: a, annotations: {service.nftproxy.io/lb-algorithm: wrr}}\n"
                + "spec: {clusterIP: 10.96.0.3, ports: [{port: 80}]}\n",
        // What a Service may not hold: each gives the same reason from both.
        "kind: Service\nmetadata: {name: a}\nspec: {clusterIP: 10.96.0.300, ports: [{port: 80}]}\n",
        "kind: Service\nmetadata: {name: a}\nspec: {clusterIP: 10.96.0.3, ports: [{port: 70000}]}\n",
        "kind: Service\nmetadata: {name: a}\nspec: {clusterIP: 10.96.0.3, ports: [{port: 80, protocol: ICMP}]}\n",
        "kind: Service\nmetadata: {name: a}\nspec: {clusterIP: 10.96.0.3, ports: [{port: 80}, {port: 80}]}\n",
        "kind: Service\nmetadata: {name: a}\nspec: {clusterIP: 10.96.0.3}\n",
        "kind: Service\nmetadata: {name: a}\n",
        "kind: Service\nmetadata: {name: a}\nspec: {clusterIP: 10.96.0.3, sessionAffinity: ClientIP,"
                + " sessionAffinityConfig: {clientIP: {timeoutSeconds: 0}}, ports: [{port: 80}]}\n",
        "kind: Service\nmetadata: {name: a}\nspec: {type: LoadBalancer, clusterIP: 10.96.0.3, loadBalancerSourceRanges: [nope],"
                + " ports: [{port: 80}]}\n",
        // Headless and ExternalName: nothing to program.
        "kind: Service\nmetadata: {name: a}\nspec: {clusterIP: None, ports: [{port: 80}]}\n",
        "kind: Service\nmetadata: {name: a}\nspec: {type: ExternalName, externalName: example.com}\n",
        // Nodes: no zone label, addresses of both families, podCIDR alone, being deleted, the autoscaler's taint.
        """
        kind: Node
        metadata: {name: a}
        spec: {podCIDR: 10.244.1.0/24, taints: [{key: ToBeDeletedByClusterAutoscaler, effect: NoSchedule}]}
        status: {addresses: [{type: Hostname, address: a}, {type: ExternalIP, address: 192.0.2.9},
          {type: InternalIP, address: 192.168.60.2}, {type: InternalIP, address: "fd00::2"}, {type: InternalIP, address: bad}]}
        """,
        "kind: Node\nmetadata: {name: b, labels: {topology.kubernetes.io/zone: z2}, deletionTimestamp: \"2026-01-01T00:00:00Z\"}\n"
                + "spec: {podCIDRs: [10.244.2.0/24, \"fd00:244:2::/64\"], podCIDR: 10.244.2.0/24}\n",
        // ServiceCIDRs, one range that does not parse.
        "kind: ServiceCIDR\napiVersion: networking.k8s.io/v1\nmetadata: {name: kubernetes}\nspec: {cidrs: [10.96.0.0/16, \"fd00:96::/108\", nope]}\n",
    })
    void theCasesWhereTheRepresentationsDifferReadTheSame(String yaml) {
        assertEquals(1, compareAll(yaml, ProxySelection.DEFAULT));
    }

    @Test
    void theLoadBalancingAnnotationChoosesTheAlgorithmAndAValueThatNamesNoneIsAWarning() {
        String yaml = "kind: Service\nmetadata: {name: web, namespace: shop, annotations: {service.nftproxy.io/lb-algorithm: %s}}\n"
                + "spec: {clusterIP: 10.96.0.3, ports: [{name: a, port: 80}, {name: b, port: 81}]}\n";
        for (String[] c : new String[][] {{"maglev", "MAGLEV"}, {"source-hash", "SOURCE_HASH"}, {"random", "RANDOM"},
                {"\" maglev \"", "MAGLEV"}}) {
            KubeObject.ServiceRecord r = (KubeObject.ServiceRecord) KubeModel.objects(Yaml.documents(yaml.formatted(c[0])).get(0),
                    ProxySelection.DEFAULT, p -> { }).get(0);
            assertEquals(List.of(c[1], c[1]), r.ports().stream().map(p -> p.algorithm().name()).toList(), c[0]);
            assertEquals(List.of(), r.warnings(), c[0]);
        }
        KubeObject.ServiceRecord typo = (KubeObject.ServiceRecord) KubeModel.objects(Yaml.documents(yaml.formatted("Maglev")).get(0),
                ProxySelection.DEFAULT, p -> { }).get(0);
        assertEquals(List.of("RANDOM", "RANDOM"), typo.ports().stream().map(p -> p.algorithm().name()).toList(),
                "programmed, at random");
        assertEquals(List.of("Service shop/web: annotation service.nftproxy.io/lb-algorithm 'Maglev' is not one of random, maglev,"
                + " source-hash; its endpoints are picked at random"), typo.warnings());
        KubeObject.ServiceRecord none = (KubeObject.ServiceRecord) KubeModel.objects(Yaml.documents(
                "kind: Service\nmetadata: {name: web}\nspec: {clusterIP: 10.96.0.3, ports: [{port: 80}]}\n").get(0),
                ProxySelection.DEFAULT, p -> { }).get(0);
        assertEquals("RANDOM", none.ports().get(0).algorithm().name(), "kube-proxy's, without the annotation");
    }

    @Test
    void anObjectOutOfOurSelectionIsAnEmptyRecordEitherWay() {
        String yaml = """
                kind: Service
                metadata: {name: a, labels: {service.kubernetes.io/service-proxy-name: other}}
                spec: {clusterIP: 10.96.0.3, ports: [{port: 80}]}
                ---
                kind: EndpointSlice
                metadata: {name: a-1, labels: {kubernetes.io/service-name: a, service.kubernetes.io/headless: ""}}
                addressType: IPv4
                endpoints: [{addresses: [10.244.1.2]}]
                ports: [{port: 80}]
                """;
        assertEquals(2, compareAll(yaml, ProxySelection.DEFAULT));
    }

    /** Reads every document both ways, asserts the records and the reported problems equal; how many were compared. */
    private static int compareAll(String yaml, ProxySelection selection) {
        int compared = 0;
        for (Object doc : Yaml.documents(yaml)) {
            List<Object> items = doc instanceof Map<?, ?> m && m.get("items") instanceof List<?> l ? new ArrayList<>(l) : List.of(doc);
            for (Object item : items) {
                List<String> treeProblems = new ArrayList<>();
                List<KubeObject> fromTree = KubeModel.objects(item, selection, treeProblems::add);
                if (fromTree.isEmpty()) {
                    continue; // a kind the proxy does not read
                }
                Class<? extends HasMetadata> type = switch (fromTree.get(0).key().kind()) {
                    case SERVICE -> Service.class;
                    case ENDPOINT_SLICE -> EndpointSlice.class;
                    case NODE -> Node.class;
                    case SERVICE_CIDR -> ServiceCIDR.class;
                };
                HasMetadata typed = JSON.unmarshal(JSON.asJson(item), type);
                List<String> typedProblems = new ArrayList<>();
                KubeObject fromTyped = KubeModel.object(typed, selection, typedProblems::add);
                assertEquals(fromTree, List.of(fromTyped), "the same object read from its tree and typed:\n" + yaml);
                assertEquals(treeProblems, typedProblems);
                compared++;
            }
        }
        return compared;
    }
}
