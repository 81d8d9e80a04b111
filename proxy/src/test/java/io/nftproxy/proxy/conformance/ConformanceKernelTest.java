package io.nftproxy.proxy.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import io.nftproxy.proxy.cli.DryRunCliTest;
import io.nftproxy.proxy.cli.Main;
import io.nftproxy.sandbox.Netns;
import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.testkit.Kernel;

/**
 * Runs every scenario against both backends, nftables (ours) and iptables (kube-proxy's
 * iptables mode as the reference), with real packets, and holds each to the scenario's
 * expectations and to each other, flow by flow. Prints a summary table.
 */
class ConformanceKernelTest {
    static final Path SCENARIOS = Path.of("..", "conformance", "scenarios");
    static final List<String> SUMMARY = Collections.synchronizedList(new ArrayList<>());
    static final int[] TOTALS = new int[3];
    /** Chi-square critical values at significance 0.001, by degrees of freedom 1..9. */
    static final double[] CHI2_001 = {10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32, 26.12, 27.88};

    /** What one flow did under one backend. */
    record Observed(String result, Set<String> answeredBy, boolean masqueraded, Map<String, Integer> counts) {
        String brief() {
            return result.equals("ANSWERED") ? result + " " + answeredBy + (masqueraded ? " masqueraded" : "") : result;
        }

        boolean agreesWith(Observed o) {
            return result.equals(o.result) && answeredBy.equals(o.answeredBy) && masqueraded == o.masqueraded;
        }
    }

    @TestFactory
    Stream<DynamicTest> scenarios() throws Exception {
        List<Path> all;
        try (Stream<Path> s = Files.list(SCENARIOS)) {
            all = s.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
        }
        assertTrue(all.size() >= 40, "scenarios found: " + all.size());
        String only = System.getProperty("nftproxy.scenario", ""); // -Dnftproxy.scenario=51- runs the scenarios named so
        List<Path> files = all.stream().filter(f -> f.getFileName().toString().contains(only)).toList();
        // Every other scenario runs our side with counters, by turns --service-counters and
        // --endpoint-counters: counting must not change what the packets do, and each layout
        // meets the whole range of scenarios.
        return IntStream.range(0, files.size()).mapToObj(i -> {
            String counters = i % 4 == 1 ? "--service-counters" : i % 4 == 3 ? "--endpoint-counters" : null;
            return DynamicTest.dynamicTest(files.get(i).getFileName().toString() + (counters != null ? " (" + counters + ")" : ""),
                    () -> run(Scenario.read(files.get(i)), counters));
        });
    }

    /** Runs a scenario; {@code counters} is the counters flag our side runs with (null: none). */
    static void run(Scenario sc, String counters) throws Exception {
        Kernel.require();
        Path dir = Files.createTempDirectory("conformance-" + sc.name());
        int divergences = 0;
        int agreements = 0;
        List<String> failures = new ArrayList<>();
        try (Sandbox box = new Sandbox("nftp-cf")) {
            if (sc.podBridge() != null) {
                box.bridgePods(sc.podBridge());
            }
            for (Scenario.Pod p : sc.pods()) {
                box.pod(p.ips().toArray(new String[0]));
                for (String ip : p.ips()) {
                    for (int port : p.ports()) {
                        box.serve(ip, port);
                    }
                }
            }
            Netns clients = sc.clients().isEmpty() ? null : box.pod(sc.clients().toArray(new String[0]));
            sc.nodeAddresses().forEach(box::nodeAddress);
            Map<String, List<Observed>> byBackend = new TreeMap<>();
            for (String mode : List.of("nftables", "iptables")) {
                List<Observed> obs = new ArrayList<>();
                Files.writeString(dir.resolve("objects.yaml"), sc.manifests());
                program(box, dir, mode, sc, counters);
                for (Scenario.Step step : sc.steps()) {
                    if (step.isUpdate()) {
                        Files.writeString(dir.resolve("objects.yaml"), step.update());
                        program(box, dir, mode, sc, counters);
                        obs.add(null);
                        continue;
                    }
                    obs.add(flow(box, clients, step));
                }
                cli("cleanup", "--netns", box.node.name(), "--mode", mode);
                box.node.exec("conntrack", "-F");
                byBackend.put(mode, obs);
            }
            List<Observed> nft = byBackend.get("nftables");
            List<Observed> ipt = byBackend.get("iptables");
            for (int i = 0; i < sc.steps().size(); i++) {
                Scenario.Step step = sc.steps().get(i);
                if (step.isUpdate()) {
                    continue;
                }
                Scenario.Divergence d = sc.divergence(i);
                for (Map.Entry<String, Observed> e : Map.of("nftables", nft.get(i), "iptables", ipt.get(i)).entrySet()) {
                    String expected = d == null ? step.expect().result() : e.getKey().equals("nftables") ? d.nftables() : d.iptables();
                    String why = check(step, expected, e.getValue());
                    if (why != null) {
                        failures.add("flow " + i + " (" + step + ") under " + e.getKey() + ": " + why);
                    }
                }
                if (d != null) {
                    divergences++;
                } else if (Boolean.TRUE.equals(step.expect().sticky())
                        ? nft.get(i).result().equals(ipt.get(i).result()) && nft.get(i).answeredBy().size() == 1
                                && ipt.get(i).answeredBy().size() == 1
                        : nft.get(i).agreesWith(ipt.get(i))) {
                    // Sticky flows agree on stickiness: which endpoint a client lands on is random.
                    agreements++;
                } else {
                    failures.add("flow " + i + " (" + step + "): backends disagree: nftables " + nft.get(i).brief()
                            + ", iptables " + ipt.get(i).brief());
                }
            }
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        int flows = (int) sc.steps().stream().filter(s -> !s.isUpdate()).count();
        SUMMARY.add(String.format("%-40s %5d %10d %11d  %s", sc.name(), flows, agreements, divergences,
                failures.isEmpty() ? "ok" : "FAILED"));
        synchronized (TOTALS) {
            TOTALS[0] += flows;
            TOTALS[1] += agreements;
            TOTALS[2] += divergences;
        }
        assertEquals(List.of(), failures, sc.name() + ": " + sc.description());
    }

    static void program(Sandbox box, Path dir, String mode, Scenario sc, String counters) {
        List<String> args = new ArrayList<>(List.of("run", "--mode", mode, "--manifests", dir.toString(), "--netns",
                box.node.name(), "--once", "--hostname-override", "node-a",
                "--cluster-cidr", "10.244.0.0/16,fd00:244::/64", "--service-cidr", "10.96.0.0/16,fd00:96::/64"));
        if (!sc.args().contains("--node-ip")) {
            args.addAll(List.of("--node-ip", Sandbox.NODE_IP + "," + Sandbox.NODE_IP6)); // a scenario may give its own
        }
        args.addAll(sc.args());
        if (counters != null && mode.equals("nftables")) {
            args.add(counters);
        }
        cli(args.toArray(new String[0]));
    }

    static void cli(String... args) {
        int code;
        try {
            code = Main.execute(args);
        } finally {
            DryRunCliTest.quietLogging();
        }
        if (code != 0) {
            throw new AssertionError("nftproxy " + String.join(" ", args) + " exited " + code);
        }
    }

    static Observed flow(Sandbox box, Netns clients, Scenario.Step step) throws Exception {
        Netns from = switch (step.from()) {
            case "pod" -> clients;
            case "endpoint" -> box.podOf(step.src());
            case "external" -> box.ext;
            case "node" -> box.node;
            default -> throw new IllegalArgumentException("unknown source " + step.from());
        };
        String src = step.from().equals("pod") || step.from().equals("endpoint") ? step.src() : null;
        Set<String> who = new TreeSet<>();
        Map<String, Integer> counts = new TreeMap<>();
        String result = null;
        boolean masq = false;
        for (int i = 0; i < step.repeat(); i++) {
            Sandbox.Outcome o = step.proto().equals("udp") ? box.udp(from, src, step.dst(), step.port())
                    : box.tcp(from, src, step.dst(), step.port());
            String r = o.result().name();
            if (result == null) {
                result = r;
            } else if (!result.equals(r)) {
                result = result + "|" + r;
            }
            if (o.result() == Sandbox.Outcome.Result.ANSWERED) {
                who.add(o.answeredBy());
                counts.merge(o.answeredBy(), 1, Integer::sum);
                String expectedSource = src != null ? src : step.from().equals("external")
                        ? (step.dst().contains(":") ? Sandbox.EXT_IP6 : Sandbox.EXT_IP) : null;
                if (expectedSource != null && !InetAddress.getByName(expectedSource)
                        .equals(InetAddress.getByName(o.peerSeen()))) {
                    masq = true;
                }
            }
        }
        return new Observed(result, who, masq, counts);
    }

    /** Null when the observation meets the expectation, else why not. */
    static String check(Scenario.Step step, String expectedResult, Observed o) {
        if (!expectedResult.equals(o.result())) {
            return "expected " + expectedResult + ", got " + o.brief();
        }
        if (!o.result().equals("ANSWERED")) {
            return null;
        }
        Scenario.Expect e = step.expect();
        if (e.answeredBy() != null && !new TreeSet<>(e.answeredBy()).containsAll(o.answeredBy())) {
            return "answered by " + o.answeredBy() + ", allowed " + e.answeredBy();
        }
        if (e.answeredBy() != null && step.repeat() >= 8 * e.answeredBy().size() && e.sticky() == null
                && !o.answeredBy().equals(new TreeSet<>(e.answeredBy()))) {
            return "not every endpoint answered in " + step.repeat() + " tries: " + o.answeredBy();
        }
        if (e.masqueraded() != null && e.masqueraded() != o.masqueraded()) {
            return (e.masqueraded() ? "expected masquerade" : "expected the client's address") + ", got " + o.brief();
        }
        if (Boolean.TRUE.equals(e.sticky()) && o.answeredBy().size() != 1) {
            return "expected one endpoint for one client, got " + o.answeredBy();
        }
        if ("uniform".equals(step.distribution()) && e.answeredBy() != null) {
            int k = e.answeredBy().size();
            double expect = (double) step.repeat() / k;
            double chi2 = 0;
            for (String ep : e.answeredBy()) {
                double d = o.counts().getOrDefault(ep, 0) - expect;
                chi2 += d * d / expect;
            }
            if (k >= 2 && chi2 > CHI2_001[k - 2]) {
                return String.format("not uniform: chi-square %.2f > %.2f (%d dof, p = 0.001): %s", chi2, CHI2_001[k - 2],
                        k - 1, o.counts());
            }
        }
        return null;
    }

    /** The table, printed and written to target/conformance.txt (.ci/run shows it at the end of the run). */
    @AfterAll
    static void summary() throws IOException {
        StringBuilder t = new StringBuilder("Conformance: nftables (nftproxy) against iptables (kube-proxy's iptables mode)\n");
        t.append(String.format("%-40s %5s %10s %11s%n", "scenario", "flows", "agreements", "divergences"));
        SUMMARY.stream().sorted().forEach(line -> t.append(line).append('\n'));
        t.append(String.format("%-40s %5d %10d %11d%n", SUMMARY.size() + " scenarios", TOTALS[0], TOTALS[1], TOTALS[2]));
        System.out.println();
        System.out.print(t);
        Files.writeString(Path.of("target", "conformance.txt"), t.toString());
    }
}
