package io.nftproxy.proxy.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.sandbox.Netns;
import io.nftproxy.sandbox.Sandbox;

/**
 * Packets conntrack marks INVALID are dropped on their way through the node, as kube-proxy drops
 * them (kubernetes issues 74839, 117924: an out-of-window segment from an endpoint would reach the
 * client without reverse NAT and reset its connection), unless nf_conntrack_tcp_be_liberal is set.
 * The invalid packets here are TCP segments whose flags the client's namespace rewrites to SYN|RST
 * on the way out (nft's {@code tcp flags set}); a counter in the pod's namespace, before its own
 * conntrack, counts what arrives; valid SYNs to another port, sent after them on the same path, say
 * when everything sent before has passed.
 */
class InvalidPacketsKernelTest {
    static final String POD = "10.244.1.9";

    static long arrived(Netns pod, int port) {
        String chain = pod.exec("nft", "list", "chain", "ip", "count", "pre");
        for (String line : chain.lines().toList()) {
            if (line.contains("dport " + port + " counter packets ")) {
                String rest = line.substring(line.indexOf("counter packets ") + 16);
                return Long.parseLong(rest.substring(0, rest.indexOf(' ')));
            }
        }
        throw new IllegalStateException("no counter for port " + port + ": " + chain);
    }

    static void connect(Netns from, int port) {
        from.exec("bash", "-c", "timeout 0.3 bash -c 'echo > /dev/tcp/" + POD + "/" + port + "' 2>/dev/null; true");
    }

    @Test
    void invalidPacketsAreDroppedUnlessTcpIsLiberal(@TempDir Path dir) throws Exception {
        new Manifests().service("web", "10.96.0.10", "[{name: http, port: 80}]")
                .slice("web", "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}]", POD + "@node-a")
                .write(dir, "web.yaml");
        try (Topology s = new Topology()) {
            Netns pod = s.pod(POD);
            s.ext.exec("ip", "route", "add", "10.244.0.0/16", "via", Sandbox.NODE_IP);
            s.ext.execInput("""
                    table ip mangle {
                      chain out {
                        type filter hook output priority raw - 10
                        tcp dport 7777 tcp flags set syn | rst
                      }
                    }
                    """, "nft", "-f", "-");
            pod.execInput("""
                    table ip count {
                      chain pre {
                        type filter hook prerouting priority -400
                        tcp dport 7777 counter
                        tcp dport 7778 counter
                      }
                    }
                    """, "nft", "-f", "-");
            s.node.exec("sysctl", "-qw", "net.netfilter.nf_conntrack_tcp_be_liberal=0");

            ProxyRun.Result r = ProxyRun.once(s, dir);
            assertTrue(s.node.exec("nft", "list", "chain", "ip", "nftproxy", "filter-forward").contains("ct state invalid drop"));
            connect(s.ext, 7777);
            connect(s.ext, 7778);
            Sandbox.eventually(Duration.ofSeconds(10), () -> arrived(pod, 7778) > 0, "valid SYNs pass the node");
            assertEquals(0, arrived(pod, 7777), "the invalid segments, sent first, were dropped at the node: " + r.err());

            // With TCP "be liberal", as kube-proxy: no drop rule, the invalid segments pass.
            s.node.exec("sysctl", "-qw", "net.netfilter.nf_conntrack_tcp_be_liberal=1");
            ProxyRun.Result liberal = ProxyRun.once(s, dir);
            assertFalse(s.node.exec("nft", "list", "chain", "ip", "nftproxy", "filter-forward").contains("invalid"));
            assertTrue(liberal.err().contains("nf_conntrack_tcp_be_liberal set, not installing DROP rules for INVALID packets"),
                    liberal.err());
            connect(s.ext, 7777);
            Sandbox.eventually(Duration.ofSeconds(10), () -> arrived(pod, 7777) > 0, "invalid segments pass when liberal");

            // The reference backend follows the same setting.
            ProxyRun.Result ipt = ProxyRun.once(s, dir, "--mode", "iptables");
            assertFalse(s.node.exec("iptables-save", "-t", "filter").contains("INVALID"), ipt.err());
            s.node.exec("sysctl", "-qw", "net.netfilter.nf_conntrack_tcp_be_liberal=0");
            ProxyRun.once(s, dir, "--mode", "iptables");
            assertTrue(s.node.exec("iptables-save", "-t", "filter").contains("-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP"));
            ProxyRun.cli("cleanup", "--netns", s.node.name(), "--mode", "all");
        }
    }
}
