package io.nftproxy.proxy.kernel;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/** Builds Kubernetes manifests for tests as YAML text. */
final class Manifests {
    private final List<String> docs = new ArrayList<>();

    /** A service; {@code extra} is YAML spec lines (indented by 2) such as "type: NodePort". */
    Manifests service(String name, String clusterIPs, String ports, String... extra) {
        StringBuilder sb = new StringBuilder();
        sb.append("apiVersion: v1\nkind: Service\nmetadata: {name: ").append(name).append(", namespace: default}\n");
        sb.append("spec:\n  clusterIP: ").append(clusterIPs.split(",")[0]).append("\n");
        sb.append("  clusterIPs: [").append(clusterIPs).append("]\n");
        sb.append("  ports: ").append(ports).append("\n");
        for (String e : extra) {
            sb.append("  ").append(e).append("\n");
        }
        docs.add(sb.toString());
        return this;
    }

    /** The last service given an annotation. */
    Manifests annotated(String key, String value) {
        String last = docs.remove(docs.size() - 1);
        docs.add(last.replaceFirst("metadata: \\{name: ([^,]+), namespace: default}",
                "metadata: {name: $1, namespace: default, annotations: {\"" + key + "\": \"" + value + "\"}}"));
        return this;
    }

    /** Raw YAML for anything else (status of a LoadBalancer service, a Node). */
    Manifests raw(String yaml) {
        docs.add(yaml);
        return this;
    }

    /**
     * An EndpointSlice for a service. Endpoints as "ip@node" or with conditions and zone:
     * "ip@node[ready=false,serving=true,terminating=true,zone=z1,hints=z1,nodeHints=node-b]".
     */
    Manifests slice(String service, String suffix, String addressType, String ports, String... endpoints) {
        StringBuilder sb = new StringBuilder();
        sb.append("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: ").append(service)
                .append("-").append(suffix).append("\n  namespace: default\n  labels: {kubernetes.io/service-name: ")
                .append(service).append("}\naddressType: ").append(addressType).append("\nports: ").append(ports)
                .append("\nendpoints:\n");
        for (String e : endpoints) {
            String spec = e;
            String opts = "";
            int br = e.indexOf('[');
            if (br >= 0) {
                spec = e.substring(0, br);
                opts = e.substring(br + 1, e.length() - 1);
            }
            String ip = spec.substring(0, spec.indexOf('@'));
            String node = spec.substring(spec.indexOf('@') + 1);
            String ready = "true";
            String serving = null;
            String terminating = null;
            String zone = null;
            String hints = null;
            String nodeHints = null;
            for (String o : opts.isEmpty() ? new String[0] : opts.split(",")) {
                String[] kv = o.split("=");
                switch (kv[0]) {
                    case "ready" -> ready = kv[1];
                    case "serving" -> serving = kv[1];
                    case "terminating" -> terminating = kv[1];
                    case "zone" -> zone = kv[1];
                    case "hints" -> hints = kv[1];
                    case "nodeHints" -> nodeHints = kv[1];
                    default -> throw new IllegalArgumentException(o);
                }
            }
            sb.append("- addresses: [\"").append(ip).append("\"]\n  nodeName: ").append(node).append("\n");
            sb.append("  conditions: {ready: ").append(ready);
            if (serving != null) {
                sb.append(", serving: ").append(serving);
            }
            if (terminating != null) {
                sb.append(", terminating: ").append(terminating);
            }
            sb.append("}\n");
            if (zone != null) {
                sb.append("  zone: ").append(zone).append("\n");
            }
            if (hints != null || nodeHints != null) {
                sb.append("  hints: {");
                if (hints != null) {
                    sb.append("forZones: [{name: ").append(hints).append("}]").append(nodeHints != null ? ", " : "");
                }
                if (nodeHints != null) {
                    sb.append("forNodes: [{name: ").append(nodeHints).append("}]");
                }
                sb.append("}\n");
            }
        }
        docs.add(sb.toString());
        return this;
    }

    String yaml() {
        return String.join("---\n", docs);
    }

    Path write(Path dir, String file) throws IOException {
        Files.createDirectories(dir);
        Path f = dir.resolve(file);
        Path tmp = dir.resolve("." + file + ".tmp");
        Files.writeString(tmp, yaml());
        Files.move(tmp, f, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return f;
    }
}
