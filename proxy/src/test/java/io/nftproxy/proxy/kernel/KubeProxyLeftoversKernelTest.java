package io.nftproxy.proxy.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * Replacing kube-proxy in place leaves its rules on the node: its iptables mode's chains (as
 * iptables-nft keeps them: played here by the iptables reference backend, which writes kube-proxy's
 * layout) and its nftables mode's table. nftproxy removes them after its first sync, and nothing
 * else: not the kubelet's chains, not another rule in the same built-in chains, not when kube-proxy
 * runs beside it (--service-proxy-name).
 */
class KubeProxyLeftoversKernelTest {
    @Test
    void kubeProxysRulesGoAfterTheFirstSyncAndNothingElse(@TempDir Path dir) throws Exception {
        Kernel.require();
        new Manifests().service("web", "10.96.0.10", "[{name: http, port: 80}]")
                .slice("web", "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}]", "10.244.1.2@n1")
                .write(dir, "web.yaml");
        try (TestNetns ns = TestNetns.create("nftp-leftovers")) {
            // What kube-proxy leaves: its iptables rules, its nftables table; and what others have there.
            ProxyRun.Result kubeProxy = ProxyRun.cli("run", "--manifests", dir.toString(), "--mode", "iptables", "--netns",
                    ns.name(), "--once", "--hostname-override", "node-a");
            assertEquals(0, kubeProxy.exit(), kubeProxy.err());
            ns.nft("add table ip kube-proxy\nadd chain ip kube-proxy services\nadd table ip6 kube-proxy\n");
            ns.exec("iptables", "-t", "nat", "-A", "PREROUTING", "-p", "tcp", "--dport", "9999", "-j", "ACCEPT");
            ns.exec("iptables", "-t", "filter", "-N", "KUBE-FIREWALL");
            ns.exec("iptables", "-t", "filter", "-A", "INPUT", "-j", "KUBE-FIREWALL");
            assertTrue(ns.exec("iptables-save").contains("-A KUBE-SERVICES"));
            // ... and the same chains in x_tables, where a kube-proxy image that chose iptables-legacy leaves them.
            for (String rule : List.of("-t nat -N KUBE-SERVICES", "-t nat -N KUBE-SVC-ABC", "-t nat -N KUBE-MARK-DROP",
                    "-t nat -A PREROUTING -j KUBE-SERVICES", "-t nat -A KUBE-SERVICES -d 10.96.0.1/32 -j KUBE-SVC-ABC",
                    "-t nat -A PREROUTING -p tcp --dport 9999 -j ACCEPT", "-t filter -N KUBE-FIREWALL",
                    "-t filter -A INPUT -j KUBE-FIREWALL")) {
                List<String> cmd = new ArrayList<>(List.of("iptables-legacy"));
                cmd.addAll(List.of(rule.split(" ")));
                ns.exec(cmd.toArray(String[]::new));
            }

            // Beside kube-proxy, its rules are its own.
            ProxyRun.Result beside = ProxyRun.cli("run", "--manifests", dir.toString(), "--netns", ns.name(), "--once",
                    "--hostname-override", "node-a", "--service-proxy-name", "nftproxy", "--table", "beside");
            assertEquals(0, beside.exit(), beside.err());
            assertTrue(ns.exec("iptables-save").contains("-A KUBE-SERVICES"), "nothing removed beside kube-proxy");
            assertTrue(ns.exec("nft", "list", "tables").contains("table ip kube-proxy"));

            // In its place: removed once our rules are in.
            ProxyRun.Result ours = ProxyRun.cli("run", "--manifests", dir.toString(), "--netns", ns.name(), "--once",
                    "--hostname-override", "node-a");
            assertEquals(0, ours.exit(), ours.err());
            String saved = ns.exec("iptables-save");
            assertFalse(saved.contains("KUBE-SERVICES") || saved.contains("KUBE-SVC-") || saved.contains("KUBE-SEP-")
                    || saved.contains("KUBE-POSTROUTING") || saved.contains("KUBE-MARK-MASQ"), saved);
            assertTrue(saved.contains("-A PREROUTING -p tcp -m tcp --dport 9999 -j ACCEPT"), "another rule stays:\n" + saved);
            assertTrue(saved.contains("-A INPUT -j KUBE-FIREWALL"), "the kubelet's chain stays:\n" + saved);
            String tables = ns.exec("nft", "list", "tables");
            assertFalse(tables.contains("kube-proxy"), tables);
            assertTrue(tables.contains("table ip nftproxy"), tables);
            assertTrue(ours.err().contains("removed what kube-proxy left"), ours.err());
            String legacy = ns.exec("iptables-legacy-save");
            assertFalse(legacy.contains("KUBE-SERVICES") || legacy.contains("KUBE-SVC-"), legacy);
            assertTrue(legacy.contains("-A PREROUTING -p tcp -m tcp --dport 9999 -j ACCEPT"), "another rule stays:\n" + legacy);
            assertTrue(legacy.contains("-A INPUT -j KUBE-FIREWALL") && legacy.contains(":KUBE-MARK-DROP"),
                    "the kubelet's chains stay:\n" + legacy);
            assertTrue(ours.err().contains("removed what kube-proxy left in iptables-legacy: 2 chains"), ours.err());
        }
    }
}
