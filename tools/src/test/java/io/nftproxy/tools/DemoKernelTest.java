package io.nftproxy.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.sandbox.Netns;
import io.nftproxy.testkit.Kernel;

/** The demo, as bin/nftproxy demo runs it from the tools jar: every semantic shown, nothing left behind. */
class DemoKernelTest {
    @Test
    void theDemoShowsEverySemanticAndLeavesNothingBehind() {
        Kernel.require();
        PrintStream oldOut = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int exit;
        try {
            System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
            exit = Tools.execute("demo");
        } finally {
            System.setOut(oldOut);
        }
        String out = buf.toString(StandardCharsets.UTF_8);
        assertEquals(0, exit, out);
        assertTrue(out.contains("10 x 10.244.1.2:8080 saw client 192.168.50.10"), out);
        assertTrue(out.contains("REFUSED: rejected at once"), out);
        // Three endpoints: 3 - 1 = 0b10, so web is in the bit-1 set of the tree that leads to ip-pick-3-4, which draws among 3.
        assertTrue(out.contains("set ip-count-bit-1 {") && out.contains("10.96.0.10 . tcp . 80 comment \"demo/web:http\""), out);
        assertTrue(out.contains("chain ip-pick-3-4 {") && out.contains("numgen random mod 3 map @service-endpoints-1-8"), out);
        // cart (affinity) is data too: its ClusterIP in the sticky set, and the chains it goes through shown.
        assertTrue(out.contains("set sticky-ips-600 {") && out.contains("10.96.0.12 . tcp . 80 comment \"demo/cart:http\""), out);
        assertTrue(out.contains("chain ip-sticky-check-1-8 {") && out.contains("chain ip-sticky-1-8-slot-0 {"), out);
        assertFalse(out.contains("chain ip-sticky-1-8-slot-5 {") || out.contains("chain ip-sticky-remember-2-3 {"), "the rest left out");
        assertTrue(out.contains("kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family=\"IPv4\",} 1.0"), "the metrics it scraped:\n" + out);
        for (String ep : List.of("10.244.1.2:8080", "10.244.1.3:8080", "10.244.1.4:8080")) {
            assertTrue(out.lines().anyMatch(l -> l.trim().startsWith(ep)), "web spread includes " + ep + ": " + out);
        }
        assertFalse(Netns.run(List.of("ip", "netns", "list"), null).contains("nftproxy-demo"), "the sandbox is gone");
    }
}
