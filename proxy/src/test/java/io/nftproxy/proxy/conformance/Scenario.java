package io.nftproxy.proxy.conformance;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * One conformance scenario, read from conformance/scenarios/*.yaml: the cluster objects, the
 * proxy's settings, the pods that serve, and flows with their expected outcome, in order (an
 * "update" step replaces the manifests between flows). Divergences between the two backends
 * that kube-proxy's own modes also show are listed with their reason. {@code nodeAddresses} are
 * extra addresses of the node (a secondary NodePort address); {@code podBridge} puts the pods on
 * one bridge of that name.
 */
record Scenario(String name, String description, List<String> args, List<Pod> pods, List<String> clients,
                List<String> nodeAddresses, String manifests, List<Step> steps, List<Divergence> divergences,
                String podBridge) {

    record Pod(List<String> ips, List<Integer> ports) {
    }

    /** A flow, or an update of the manifests when {@code update} is set. */
    record Step(String from, String src, String proto, String dst, int port, int repeat, Expect expect, String update,
                String distribution) {
        boolean isUpdate() {
            return update != null;
        }

        @Override
        public String toString() {
            return isUpdate() ? "update" : from + (src == null ? "" : " " + src) + " -> " + proto + " " + dst + ":" + port;
        }
    }

    /** {@code result}: ANSWERED (default), REFUSED, TIMEOUT; the endpoints that may answer; masquerade. */
    record Expect(String result, List<String> answeredBy, Boolean masqueraded, Boolean sticky) {
    }

    record Divergence(int flow, String nftables, String iptables, String reason) {
    }

    @SuppressWarnings("unchecked")
    static Scenario read(Path file) throws IOException {
        Map<String, Object> m = new ObjectMapper(new YAMLFactory()).readValue(file.toFile(), Map.class);
        List<Pod> pods = new ArrayList<>();
        for (Map<String, Object> p : (List<Map<String, Object>>) m.getOrDefault("pods", List.of())) {
            pods.add(new Pod((List<String>) p.get("ips"), (List<Integer>) p.getOrDefault("ports", List.of())));
        }
        List<Step> steps = new ArrayList<>();
        for (Map<String, Object> s : (List<Map<String, Object>>) m.get("flows")) {
            Map<String, Object> e = (Map<String, Object>) s.getOrDefault("expect", Map.of());
            steps.add(new Step((String) s.get("from"), (String) s.get("src"), (String) s.getOrDefault("proto", "tcp"),
                    (String) s.get("dst"), (Integer) s.getOrDefault("port", 0), (Integer) s.getOrDefault("repeat", 1),
                    new Expect((String) e.getOrDefault("result", "ANSWERED"), (List<String>) e.get("answeredBy"),
                            (Boolean) e.get("masqueraded"), (Boolean) e.get("sticky")),
                    (String) s.get("update"), (String) s.get("distribution")));
        }
        List<Divergence> div = new ArrayList<>();
        for (Map<String, Object> d : (List<Map<String, Object>>) m.getOrDefault("divergences", List.of())) {
            div.add(new Divergence((Integer) d.get("flow"), (String) d.get("nftables"), (String) d.get("iptables"),
                    (String) d.get("reason")));
        }
        return new Scenario((String) m.get("name"), (String) m.getOrDefault("description", ""),
                (List<String>) m.getOrDefault("args", List.of()), pods, (List<String>) m.getOrDefault("clients", List.of()),
                (List<String>) m.getOrDefault("nodeAddresses", List.of()), (String) m.get("manifests"), steps, div,
                (String) m.get("podBridge"));
    }

    Divergence divergence(int flow) {
        return divergences.stream().filter(d -> d.flow() == flow).findFirst().orElse(null);
    }
}
