package io.nftproxy.netlink.nft.monitor;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftTrace;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import io.nftproxy.testkit.TestNetns;

/**
 * Trace events: a packet marked for tracing is reported rule by rule, and what we decode is what
 * {@code nft monitor trace} prints for the same packets: the same ids, chains and verdicts.
 */
class TraceKernelTest {
    private static final Pattern NFT_LINE = Pattern.compile(
            "trace id ([0-9a-f]+) ip tr (\\S+) (rule .* \\(verdict (\\w+)[^)]*\\)|policy (\\w+))");

    @Test
    void whatWeDecodeIsWhatNftMonitorTracePrints() throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-trace"); NftTraceMonitor ours = NftTraceMonitor.open(ns.ns())) {
            ns.nft("""
                    table ip tr {
                      chain out {
                        type filter hook output priority 0; policy accept;
                        udp dport 9 meta nftrace set 1
                        udp dport 9 jump sub
                      }
                      chain sub {
                        udp dport 9 counter
                      }
                    }
                    """);
            Path log = Files.createTempFile("nft-monitor-trace", ".txt");
            Process nft = new ProcessBuilder("ip", "netns", "exec", ns.name(), "nft", "monitor", "trace")
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            try {
                // Until nft has subscribed and shown one: each datagram is a trace of its own.
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (!Files.readString(log).contains("policy accept")) {
                    assertTrue(System.nanoTime() < deadline, "nft monitor trace showed nothing: " + Files.readString(log));
                    ns.exec("bash", "-c", "echo x > /dev/udp/127.0.0.1/9; true");
                    Thread.sleep(50); // pacing the sends; the loop's condition is the synchronisation
                }
            } finally {
                nft.destroy();
                nft.waitFor();
            }
            Map<String, List<String>> byNft = new LinkedHashMap<>();
            for (String line : Files.readAllLines(log)) {
                Matcher m = NFT_LINE.matcher(line.trim());
                if (m.find()) {
                    String what = m.group(4) != null ? "rule " + m.group(4) : "policy " + m.group(5);
                    byNft.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(m.group(2) + " " + what);
                }
            }
            Files.delete(log);
            assertFalse(byNft.isEmpty());

            Map<String, List<String>> byUs = new LinkedHashMap<>();
            for (NftTrace t; (t = ours.next(Duration.ofMillis(500))) != null; ) {
                assertEquals(Family.IP, t.family());
                assertEquals("tr", t.table());
                String what = switch (t.type()) {
                    // The end of a chain reached without a verdict comes as a rule event without a rule.
                    case RULE -> t.ruleHandle() == 0 ? "end" : "rule " + t.verdict().kind().name().toLowerCase(Locale.ROOT);
                    case POLICY -> "policy " + (t.policy() == 1 ? "accept" : "drop");
                    default -> t.type().name().toLowerCase(Locale.ROOT);
                };
                String id = String.format("%08x", t.id());
                if (!byUs.containsKey(id)) {
                    // The kernel sends the packet's headers with a trace's first event only.
                    assertTrue(t.network() != null && t.network().get(9) == 17, "the packet's IP header: UDP");
                    assertEquals(9, t.transport().be16At(2), "its UDP header: port 9");
                }
                byUs.computeIfAbsent(id, k -> new ArrayList<>()).add(t.chain() + " " + what);
            }
            for (Map.Entry<String, List<String>> e : byNft.entrySet()) {
                List<String> decoded = byUs.get(e.getKey());
                assertEquals(List.of("out rule continue", "out rule jump", "sub rule continue", "sub end", "out end",
                        "out policy accept"), decoded, "trace " + e.getKey());
                // nft prints nothing for the ends of chains: the rest is the same, event by event.
                assertEquals(e.getValue(), decoded.stream().filter(x -> !x.endsWith(" end")).toList(),
                        "trace " + e.getKey() + ": nft printed " + e.getValue());
            }
        }
    }
}
