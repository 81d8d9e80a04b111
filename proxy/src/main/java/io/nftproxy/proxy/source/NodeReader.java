package io.nftproxy.proxy.source;

import static io.nftproxy.proxy.source.KubeModel.orEmpty;
import static io.nftproxy.proxy.source.TreeValues.mapOrEmpty;
import static io.nftproxy.proxy.source.TreeValues.text;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import io.fabric8.kubernetes.api.model.Taint;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.NodeInfo;

/**
 * A Node (core/v1) as the proxy sees it: zone, primary addresses, whether it is leaving, pod
 * CIDRs. Lenient, as kube-proxy is with its own Node: a field it cannot read is simply absent.
 * Written once against a {@link View}: a manifest's tree or an informer's typed object.
 */
final class NodeReader {
    static final String ZONE_LABEL = "topology.kubernetes.io/zone";
    /** The cluster autoscaler's taint on a node it is about to remove. */
    static final String TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler";

    private NodeReader() {
    }

    interface View {
        /** The {@code topology.kubernetes.io/zone} label. */
        String zone();

        /** {@code status.addresses}, in order. */
        List<Address> addresses();

        /** {@code spec.podCIDRs}, else the older single {@code spec.podCIDR}. */
        List<String> podCIDRs();

        boolean deleting();

        List<String> taintKeys();
    }

    record Address(String type, String address) {
    }

    static NodeInfo read(String name, View n) {
        List<InetAddress> addrs = new ArrayList<>();
        // Primary IPs: the first InternalIP of each family, else the first ExternalIP.
        for (String type : List.of("InternalIP", "ExternalIP")) {
            for (Address a : n.addresses()) {
                if (!type.equals(a.type())) {
                    continue;
                }
                try {
                    InetAddress ip = Inet.parse(a.address());
                    if (addrs.stream().noneMatch(x -> x.getAddress().length == ip.getAddress().length)) {
                        addrs.add(ip);
                    }
                } catch (IllegalArgumentException | NullPointerException ignored) {
                    // a missing or malformed address is simply not a primary IP
                }
            }
        }
        List<Cidr> podCIDRs = new ArrayList<>();
        for (String c : n.podCIDRs()) {
            try {
                podCIDRs.add(Cidr.parse(c));
            } catch (IllegalArgumentException | NullPointerException ignored) {
                // skipped: NodeCIDR detection then finds no CIDR of that family
            }
        }
        // Leaving: being deleted, or marked for deletion by the cluster autoscaler (kube-proxy's
        // NodeEligible: a load balancer should drain it either way).
        boolean leaving = n.deleting() || n.taintKeys().contains(TO_BE_DELETED_TAINT);
        return new NodeInfo(name, n.zone(), addrs, leaving, podCIDRs);
    }

    /** A Node as a manifest's tree holds it. */
    static View tree(Map<?, ?> n) {
        Map<?, ?> meta = mapOrEmpty(n.get("metadata"));
        Map<?, ?> status = mapOrEmpty(n.get("status"));
        Map<?, ?> spec = mapOrEmpty(n.get("spec"));
        return new View() {
            @Override
            public String zone() {
                return text(mapOrEmpty(meta.get("labels")).get(ZONE_LABEL));
            }

            @Override
            public List<Address> addresses() {
                List<Address> out = new ArrayList<>();
                if (status.get("addresses") instanceof List<?> l) {
                    for (Object o : l) {
                        if (o instanceof Map<?, ?> a) {
                            out.add(new Address(text(a.get("type")), text(a.get("address"))));
                        }
                    }
                }
                return out;
            }

            @Override
            public List<String> podCIDRs() {
                List<?> cidrs = spec.get("podCIDRs") instanceof List<?> l && !l.isEmpty() ? l
                        : spec.get("podCIDR") != null ? List.of(spec.get("podCIDR")) : List.of();
                List<String> out = new ArrayList<>();
                for (Object c : cidrs) {
                    out.add(text(c));
                }
                return out;
            }

            @Override
            public boolean deleting() {
                return meta.get("deletionTimestamp") != null;
            }

            @Override
            public List<String> taintKeys() {
                List<String> out = new ArrayList<>();
                if (spec.get("taints") instanceof List<?> taints) {
                    for (Object t : taints) {
                        if (t instanceof Map<?, ?> m && m.get("key") instanceof String key) {
                            out.add(key);
                        }
                    }
                }
                return out;
            }
        };
    }

    /** A Node as the API client typed it. */
    static View api(Node node) {
        return new View() {
            @Override
            public String zone() {
                Map<String, String> labels = node.getMetadata().getLabels();
                return labels == null ? null : labels.get(ZONE_LABEL);
            }

            @Override
            public List<Address> addresses() {
                List<Address> out = new ArrayList<>();
                if (node.getStatus() != null) {
                    for (NodeAddress a : orEmpty(node.getStatus().getAddresses())) {
                        if (a != null) {
                            out.add(new Address(a.getType(), a.getAddress()));
                        }
                    }
                }
                return out;
            }

            @Override
            public List<String> podCIDRs() {
                if (node.getSpec() == null) {
                    return List.of();
                }
                List<String> cidrs = orEmpty(node.getSpec().getPodCIDRs());
                return !cidrs.isEmpty() ? cidrs : node.getSpec().getPodCIDR() != null ? List.of(node.getSpec().getPodCIDR()) : List.of();
            }

            @Override
            public boolean deleting() {
                return node.getMetadata().getDeletionTimestamp() != null;
            }

            @Override
            public List<String> taintKeys() {
                List<String> out = new ArrayList<>();
                if (node.getSpec() != null) {
                    for (Taint t : orEmpty(node.getSpec().getTaints())) {
                        if (t != null && t.getKey() != null) {
                            out.add(t.getKey());
                        }
                    }
                }
                return out;
            }
        };
    }
}
