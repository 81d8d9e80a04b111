package io.nftproxy.proxy.source;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The fields of the Kubernetes objects the proxy reads (core/v1 Service and Node,
 * discovery.k8s.io/v1 EndpointSlice, networking.k8s.io/v1 ServiceCIDR), as their API types
 * declare them, so that a manifest's misspelled field ({@code protocl:}) can be named. The API
 * server drops unknown fields and so does the proxy; naming them is for the reader of
 * {@code run --once --dry-run -v 2}. A pure function of the object's tree.
 *
 * <p>A schema maps a field to a leaf (null or "": a value, or a part not looked into), to a schema
 * (an object), or to a one-element list holding the schema of a list's items.
 */
final class KnownFields {
    private KnownFields() {
    }

    private static final Map<String, Object> OBJECT_META = schema(
            "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
            "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
            "managedFields");

    private static final Map<String, Object> SERVICE = Map.of(
            "apiVersion", "", "kind", "", "metadata", OBJECT_META,
            "spec", with(schema("selector", "clusterIP", "clusterIPs", "type", "externalIPs", "sessionAffinity",
                            "loadBalancerIP", "loadBalancerSourceRanges", "externalName", "externalTrafficPolicy",
                            "healthCheckNodePort", "publishNotReadyAddresses", "sessionAffinityConfig", "ipFamilies",
                            "ipFamilyPolicy", "allocateLoadBalancerNodePorts", "loadBalancerClass", "internalTrafficPolicy",
                            "trafficDistribution"),
                    "ports", List.of(schema("name", "protocol", "appProtocol", "port", "targetPort", "nodePort"))),
            "status", with(schema("conditions"), "loadBalancer",
                    Map.of("ingress", List.of(schema("ip", "hostname", "ipMode", "ports")))));

    private static final Map<String, Object> ENDPOINT_SLICE = Map.of(
            "apiVersion", "", "kind", "", "metadata", OBJECT_META, "addressType", "",
            "endpoints", List.of(with(schema("addresses", "hostname", "targetRef", "deprecatedTopology", "nodeName", "zone"),
                    "conditions", schema("ready", "serving", "terminating"),
                    "hints", schema("forZones", "forNodes"))),
            "ports", List.of(schema("name", "protocol", "appProtocol", "port")));

    private static final Map<String, Object> NODE = Map.of(
            "apiVersion", "", "kind", "", "metadata", OBJECT_META,
            "spec", schema("podCIDR", "podCIDRs", "providerID", "unschedulable", "taints", "configSource", "externalID"),
            "status", "");

    private static final Map<String, Object> SERVICE_CIDR = Map.of(
            "apiVersion", "", "kind", "", "metadata", OBJECT_META, "spec", schema("cidrs"), "status", "");

    /** The paths of {@code tree}'s fields its kind does not have ({@code spec.ports[0].protocl}); none for other kinds. */
    static List<String> unknown(ObjectKey.Kind kind, Map<?, ?> tree) {
        Map<String, Object> schema = switch (kind) {
            case SERVICE -> SERVICE;
            case ENDPOINT_SLICE -> ENDPOINT_SLICE;
            case NODE -> NODE;
            case SERVICE_CIDR -> SERVICE_CIDR;
        };
        List<String> out = new ArrayList<>();
        walk(schema, tree, "", out);
        return out;
    }

    @SuppressWarnings("unchecked")
    private static void walk(Map<String, Object> schema, Map<?, ?> tree, String path, List<String> out) {
        for (Map.Entry<?, ?> e : tree.entrySet()) {
            String key = String.valueOf(e.getKey());
            String at = path.isEmpty() ? key : path + "." + key;
            if (!schema.containsKey(key)) {
                out.add(at);
                continue;
            }
            Object sub = schema.get(key);
            if (sub instanceof Map<?, ?> m && e.getValue() instanceof Map<?, ?> v) {
                walk((Map<String, Object>) m, v, at, out);
            } else if (sub instanceof List<?> l && e.getValue() instanceof List<?> items) {
                for (int i = 0; i < items.size(); i++) {
                    if (items.get(i) instanceof Map<?, ?> item) {
                        walk((Map<String, Object>) l.get(0), item, at + "[" + i + "]", out);
                    }
                }
            }
        }
    }

    private static Map<String, Object> schema(String... leaves) {
        Map<String, Object> m = new HashMap<>();
        for (String l : leaves) {
            m.put(l, null);
        }
        return m;
    }

    private static Map<String, Object> with(Map<String, Object> base, Object... nested) {
        for (int i = 0; i < nested.length; i += 2) {
            base.put((String) nested[i], nested[i + 1]);
        }
        return base;
    }
}
