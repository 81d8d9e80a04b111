package io.nftproxy.proxy.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.sandbox.Netns;
import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.testkit.Kernel;

/**
 * nftproxy beside kube-proxy on one node, with real packets: the project's iptables backend
 * plays kube-proxy (it serves every unlabelled service, as kube-proxy does), nftproxy with
 * {@code --service-proxy-name nftproxy} the labelled ones, both in the node's namespace at once.
 * Each serves its own services, rejects its own services without endpoints, masquerades through
 * the one shared mark bit, and moving the label moves the service.
 */
class BesideKubeProxyKernelTest {
    static final String LABEL = "service.kubernetes.io/service-proxy-name";

    static String service(String name, String ip, boolean ours) {
        return "apiVersion: v1\nkind: Service\nmetadata:\n  name: " + name + "\n  namespace: default\n"
                + (ours ? "  labels: {" + LABEL + ": nftproxy}\n" : "")
                + "spec:\n  clusterIP: " + ip + "\n  clusterIPs: [" + ip + "]\n  ports: [{name: http, port: 80}]\n---\n";
    }

    static String slice(String service, boolean ours, String... ips) {
        StringBuilder sb = new StringBuilder("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: ")
                .append(service).append("-a\n  namespace: default\n  labels: {kubernetes.io/service-name: ").append(service)
                .append(ours ? ", " + LABEL + ": nftproxy" : "").append("}\naddressType: IPv4\n")
                .append("ports: [{name: http, port: 8080, protocol: TCP}]\nendpoints:\n");
        for (String ip : ips) {
            sb.append("- {addresses: [\"").append(ip).append("\"], nodeName: node-a, conditions: {ready: true}}\n");
        }
        if (ips.length == 0) {
            sb.append("  []\n");
        }
        return sb.append("---\n").toString();
    }

    /** kube-proxy's services: web (endpoint .2) and empty; ours: shop (endpoint .3) and gone (no endpoints). */
    static String objects(boolean webIsOurs) {
        return service("web", "10.96.0.60", webIsOurs) + slice("web", webIsOurs, "10.244.1.2")
                + service("empty", "10.96.0.61", false) + slice("empty", false)
                + service("shop", "10.96.0.62", true) + slice("shop", true, "10.244.1.3")
                + service("gone", "10.96.0.63", true) + slice("gone", true);
    }

    static void both(Sandbox box, Path dir) {
        List<String> common = List.of("--manifests", dir.toString(), "--netns", box.node.name(), "--once",
                "--hostname-override", "node-a", "--node-ip", Sandbox.NODE_IP, "--cluster-cidr", "10.244.0.0/16");
        ConformanceKernelTest.cli(concat(List.of("run", "--mode", "iptables"), common));
        ConformanceKernelTest.cli(concat(List.of("run", "--mode", "nftables", "--service-proxy-name", "nftproxy"), common));
    }

    static String[] concat(List<String> a, List<String> b) {
        return Stream.concat(a.stream(), b.stream()).toArray(String[]::new);
    }

    static ConformanceKernelTest.Observed tcp(Sandbox box, Netns from, String src, String ip) throws Exception {
        return ConformanceKernelTest.flow(box, from, new Scenario.Step(src == null ? "external" : "pod", src, "tcp", ip, 80, 4,
                null, null, null));
    }

    @Test
    void eachProxyServesItsOwnServicesOnOneNode(@TempDir Path dir) throws Exception {
        Kernel.require();
        try (Sandbox box = new Sandbox("nftp-bs")) {
            box.pod("10.244.1.2");
            box.pod("10.244.1.3");
            box.serve("10.244.1.2", 8080);
            box.serve("10.244.1.3", 8080);
            Netns clients = box.pod("10.244.2.100");
            Files.writeString(dir.resolve("objects.yaml"), objects(false));
            both(box, dir);

            assertEquals("ANSWERED [10.244.1.2:8080]", tcp(box, clients, "10.244.2.100", "10.96.0.60").brief(),
                    "kube-proxy's service, by kube-proxy");
            assertEquals("ANSWERED [10.244.1.3:8080]", tcp(box, clients, "10.244.2.100", "10.96.0.62").brief(),
                    "our service, by nftproxy");
            assertEquals("REFUSED", tcp(box, clients, "10.244.2.100", "10.96.0.61").result(), "kube-proxy rejects its own empty service");
            assertEquals("REFUSED", tcp(box, clients, "10.244.2.100", "10.96.0.63").result(), "nftproxy rejects its own");
            // From outside the cluster CIDR both masquerade, each through the shared 0x4000 bit,
            // and neither masquerades twice or forgets the other's mark.
            assertEquals("ANSWERED [10.244.1.2:8080] masqueraded", tcp(box, box.ext, null, "10.96.0.60").brief());
            assertEquals("ANSWERED [10.244.1.3:8080] masqueraded", tcp(box, box.ext, null, "10.96.0.62").brief());

            String nft = box.node.exec("nft", "list", "table", "ip", "nftproxy");
            String ipt = box.node.exec("iptables-save", "-t", "nat");
            assertTrue(nft.contains("10.96.0.62") && nft.contains("10.96.0.63"), "ours in our table");
            assertFalse(nft.contains("10.96.0.60") || nft.contains("10.96.0.61"), "kube-proxy's not in our table");
            assertTrue(ipt.contains("10.96.0.60/32"), "kube-proxy's in iptables");
            assertFalse(ipt.contains("10.96.0.62/32"), "ours not in kube-proxy's chains");
            String filter = box.node.exec("iptables-save", "-t", "filter");
            assertFalse(filter.contains("10.96.0.63/32"), "our empty service is rejected by us only");

            // The label moves web to nftproxy: kube-proxy lets go, nftproxy takes over.
            Files.writeString(dir.resolve("objects.yaml"), objects(true));
            both(box, dir);
            assertEquals("ANSWERED [10.244.1.2:8080]", tcp(box, clients, "10.244.2.100", "10.96.0.60").brief());
            assertTrue(box.node.exec("nft", "list", "table", "ip", "nftproxy").contains("10.96.0.60"));
            assertFalse(box.node.exec("iptables-save", "-t", "nat").contains("10.96.0.60/32"));

            ConformanceKernelTest.cli("cleanup", "--netns", box.node.name(), "--mode", "iptables");
            ConformanceKernelTest.cli("cleanup", "--netns", box.node.name(), "--mode", "nftables");
        }
    }
}
