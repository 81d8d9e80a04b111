package io.nftproxy.proxy.nodesetup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.apiserver.NodeProcess;
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * {@code kube-proxy --init-only} as a privileged init container runs it, in a node's network
 * namespace: the conntrack settings are set (read back with sysctl), nothing else is started, and
 * it exits 0; the host's own settings are untouched.
 */
class InitOnlyKernelTest {
    static String sysctl(TestNetns ns, String name) {
        return ns.exec("sysctl", "-n", "net.netfilter." + name).trim();
    }

    @Test
    void initOnlySetsConntrackAndExits() throws Exception {
        Kernel.require();
        String hostLiberal = TestNetns.run(List.of("sysctl", "-n", "net.netfilter.nf_conntrack_tcp_be_liberal"), null).trim();
        String hostMax = TestNetns.run(List.of("sysctl", "-n", "net.netfilter.nf_conntrack_max"), null).trim();
        try (TestNetns node = TestNetns.create("nftp-init")) {
            List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", node.name()));
            cmd.addAll(NodeProcess.command(List.of("kube-proxy", "--init-only", "--conntrack-tcp-be-liberal",
                    "--conntrack-udp-timeout=45s", "--conntrack-udp-timeout-stream=3m", "--conntrack-tcp-timeout-established=2h",
                    "--hostname-override=node-a")));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "it exits");
            String out = new String(p.getInputStream().readAllBytes());
            assertEquals(0, p.exitValue(), out);
            assertEquals("1", sysctl(node, "nf_conntrack_tcp_be_liberal"));
            assertEquals("45", sysctl(node, "nf_conntrack_udp_timeout"));
            assertEquals("180", sysctl(node, "nf_conntrack_udp_timeout_stream"));
            assertEquals("7200", sysctl(node, "nf_conntrack_tcp_timeout_established"));
            assertEquals("3600", sysctl(node, "nf_conntrack_tcp_timeout_close_wait"), "the default, 1h");
            assertTrue(out.contains("nf_conntrack_max and its hash size are the host's"), out);
            assertTrue(!out.contains("starting"), "no server, no source: " + out);
            assertEquals(hostLiberal, TestNetns.run(List.of("sysctl", "-n", "net.netfilter.nf_conntrack_tcp_be_liberal"), null).trim());
            assertEquals(hostMax, TestNetns.run(List.of("sysctl", "-n", "net.netfilter.nf_conntrack_max"), null).trim());

            // Run again, as the long-running container does after the init container: nothing left to write.
            Process again = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            assertTrue(again.waitFor(60, TimeUnit.SECONDS));
            String second = new String(again.getInputStream().readAllBytes());
            assertEquals(0, again.exitValue(), second);
            assertTrue(!second.contains("conntrack: set "), second);
        }
    }
}
