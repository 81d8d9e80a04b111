package io.nftproxy.proxy.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.print.NftPrinter;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.netlink.nft.wire.DebugFormat;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.Syncer;
import io.nftproxy.testkit.TestNetns;

/**
 * Holds every rule the renderer writes against nft's own encoding: each rule printed in nft
 * syntax, compiled by {@code nft --debug=netlink}, must send the expressions we send, register for
 * register. So {@code nft list} shows what nft itself would have written, and an operator can
 * read and reload our rules. The services cover every kind of chain the renderer writes (the
 * shared pick trees and pick chains, affinity, Local policy, source ranges), in both families.
 */
class RenderedRulesOracleKernelTest {
    static final ProxyConfig CFG = ProxyConfig.builder("node-a")
            .nodeIPs(List.of(Inet.parse("192.168.50.2"), Inet.parse("fd00:50::2")))
            .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"), Cidr.parse("fd00:244::/64")))
            .serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16"), Cidr.parse("fd00:96::/112")))
            .endpointCounters(true).build();

    static ProxyState state() {
        TreeMap<ServicePortName, ServicePort> services = new TreeMap<>();
        Map<ServicePortName, List<Endpoint>> endpoints = new HashMap<>();
        add(services, endpoints, ServicePort.builder(id("plain"), 80).clusterIPs(ips("10.96.0.10", "fd00:96::10"))
                .nodePort(30080).build(), 3);
        add(services, endpoints, ServicePort.builder(id("sticky"), 80).clusterIPs(ips("10.96.0.11", "fd00:96::11"))
                .affinitySeconds(600).build(), 2);
        add(services, endpoints, ServicePort.builder(id("local"), 80).clusterIPs(ips("10.96.0.12", "fd00:96::12"))
                .nodePort(30081).externalIPs(ips("192.0.2.12")).externalPolicyLocal(true).build(), 2);
        add(services, endpoints, ServicePort.builder(id("ranges"), 443).clusterIPs(ips("10.96.0.13"))
                .loadBalancerIPs(ips("192.0.2.13")).loadBalancerSourceRanges(List.of(Cidr.parse("203.0.113.0/24")))
                .build(), 1);
        // A port in each bucket of counts, so that the whole shared tree is declared.
        for (int k : List.of(9, 17, 33, 65)) {
            add(services, endpoints, ServicePort.builder(id("wide-" + k), 80).clusterIPs(ips("10.96.1." + k, "fd00:96::1:" + k))
                    .nodePort(30100 + k).build(), k);
        }
        // Past the shared tree: a block of the trees (declared for it), and, sticky, chains of its own.
        add(services, endpoints, ServicePort.builder(id("many"), 80).clusterIPs(ips("10.96.0.14"))
                .nodePort(30082).build(), NftRenderer.MAX_SHARED_PICK + 1);
        add(services, endpoints, ServicePort.builder(id("many-sticky"), 80).clusterIPs(ips("10.96.0.15"))
                .affinitySeconds(600).build(), NftRenderer.MAX_SHARED_PICK + 1);
        // Past the root's blocks: a block sent to by the verdict maps, of services and of the
        // external chains (policy Local); sticky, chains of its own.
        add(services, endpoints, ServicePort.builder(id("past-root"), 80).clusterIPs(ips("10.96.0.16"))
                .nodePort(30083).build(), NftRenderer.MAX_PLAIN_PICK + 1);
        add(services, endpoints, ServicePort.builder(id("past-root-local"), 80).clusterIPs(ips("10.96.0.17"))
                .externalIPs(ips("192.0.2.17")).nodePort(30084).externalPolicyLocal(true).build(), NftRenderer.MAX_PLAIN_PICK + 1);
        add(services, endpoints, ServicePort.builder(id("past-root-sticky"), 80).clusterIPs(ips("10.96.0.18"))
                .affinitySeconds(600).build(), NftRenderer.MAX_PLAIN_PICK + 1);
        return new ProxyState(services, endpoints, new NodeInfo("node-a", null, List.of(), false));
    }

    static ServicePortName id(String name) {
        return new ServicePortName("default", name, "http", Protocol.TCP);
    }

    static List<InetAddress> ips(String... s) {
        return List.of(s).stream().map(Inet::parse).toList();
    }

    static void add(Map<ServicePortName, ServicePort> services, Map<ServicePortName, List<Endpoint>> endpoints,
                    ServicePort svc, int n) {
        services.put(svc.id(), svc);
        List<Endpoint> eps = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            // The first on this node, for the Local policy; one of each family.
            String node = i == 0 ? "node-a" : "node-b";
            eps.add(Endpoint.ready(Inet.parse("10.244." + (1 + i / 200) + "." + (2 + i % 200)), 8080, node));
            eps.add(Endpoint.ready(Inet.parse("fd00:244::" + Integer.toHexString(2 + i)), 8080, node));
        }
        endpoints.put(svc.id(), eps);
    }

    /**
     * The forms nft's parser refuses although the kernel runs them and nft lists them, each for a
     * reason of nft's type checker, not of the encoding: a random index looked up in a map whose
     * key types the index as a mark (nft calls numgen's result an integer), a constant number
     * inside a concatenation (nft types a concatenation from its parts, and a bare number has no
     * type: the sticky chains' checks, slots and remembering leaves), and a lookup whose key is
     * all constants (the counting rule of --endpoint-counters), and the original destination
     * port of a connection ({@code ct original proto-dst}) in a concatenation, which nft types
     * only after a protocol's match (the sticky chains' remembering tree, for every protocol).
     * Nothing else may be refused.
     */
    static final List<Pattern> NFT_CANNOT_SAY = List.of(
            Pattern.compile(" dnat ip6? to (ip6? daddr \\. )?meta l4proto \\. th dport \\. numgen random mod \\d+ map @(service|nodeport|local|nodeport-local)-endpoints-\\d+-\\d+$"),
            Pattern.compile(" (th dport|ct original proto-dst) \\. 0x[0-9a-f]{8} "),
            Pattern.compile(" ct original proto-dst( \\. ip6? daddr \\. th dport)? @"),
            Pattern.compile(" [0-9a-f.:]+ \\. [a-z]+ \\. \\d+ \\. [0-9a-f.:]+ \\. \\d+ @chain-endpoints "));

    /**
     * The lines nft refuses to compile, by the line numbers its errors name; again without them
     * until it accepts the rest (nft stops reporting after a number of errors).
     */
    static Set<Integer> refused(TestNetns ns, List<String> lines) {
        Set<Integer> out = new TreeSet<>();
        for (int round = 0; round < 1000; round++) {
            List<Integer> kept = new ArrayList<>();
            StringBuilder script = new StringBuilder();
            for (int i = 0; i < lines.size(); i++) {
                if (!out.contains(i)) {
                    kept.add(i);
                    script.append(lines.get(i)).append('\n');
                }
            }
            try {
                ns.execInput(script.toString(), "nft", "--check", "-f", "-");
                return out;
            } catch (IllegalStateException e) {
                Matcher m = Pattern.compile("/dev/stdin:(\\d+):").matcher(e.getMessage());
                int before = out.size();
                while (m.find()) {
                    out.add(kept.get(Integer.parseInt(m.group(1)) - 1));
                }
                if (out.size() == before) {
                    throw e; // an error that names no line
                }
            }
        }
        throw new AssertionError("nft kept refusing lines");
    }

    @Test
    void everyRenderedRuleEncodesAsNftEncodesIt() throws Exception {
        int checked = 0;
        // What the daemon's sync writes, kept by the in-memory kernel, table by table.
        FakeNfTables fake = new FakeNfTables();
        new Syncer(fake, new NftRenderer(CFG), "nftproxy").sync(state(), null);
        for (Family family : List.of(Family.IP, Family.IP6)) {
            TableContents fr = fake.readTable(family, "nftproxy");
            Transaction objects = new Transaction().add(fr.table());
            Map<String, NftSet> sets = new HashMap<>();
            for (Chain c : fr.chains()) {
                objects.add(c);
            }
            for (NftSet s : fr.sets()) {
                objects.add(s);
                sets.put(s.name(), s);
            }
            List<Rule> rules = new ArrayList<>();
            List<String> lines = new ArrayList<>();
            for (Rule kept : fr.rules()) {
                Rule r = kept.withoutHandle(); // as the sync sent it
                rules.add(r);
                lines.add(NftPrinter.operation(new Op(Op.Verb.ADD, r), sets::get));
            }
            try (TestNetns ns = TestNetns.create("nftp-ro"); NftClient c = NftClient.open(ns.ns())) {
                c.commit(objects);
                Set<Integer> refused = refused(ns, lines);
                for (int i : refused) {
                    String line = lines.get(i);
                    assertTrue(NFT_CANNOT_SAY.stream().anyMatch(p -> p.matcher(line).find()),
                            family + ": nft refuses a rule as we print it: " + line);
                }
                List<Rule> said = new ArrayList<>();
                StringBuilder script = new StringBuilder();
                for (int i = 0; i < rules.size(); i++) {
                    if (!refused.contains(i)) {
                        said.add(rules.get(i));
                        script.append(lines.get(i)).append('\n');
                    }
                }
                List<List<String>> theirs = DebugFormat.parseNftDebug(
                        ns.execInput(script.toString(), "nft", "--debug=netlink", "-f", "-"));
                assertEquals(said.size(), theirs.size(), family + ": one expression block per rule");
                for (int i = 0; i < said.size(); i++) {
                    assertEquals(theirs.get(i), DebugFormat.sent(said.get(i)), family + ", chain "
                            + said.get(i).chain() + ": " + script.toString().lines().skip(i).findFirst().orElse(""));
                }
                // And nft lists the whole table, as an operator would: every rule, the refused forms too.
                String listed = ns.exec("nft", "list", "ruleset");
                assertTrue(listed.contains("@service-ips goto ip-pick-1-128"), listed);
                checked += said.size();
            }
        }
        assertTrue(checked > 1000, checked + " rules checked: the shared trees and chains of both families, and the services'");
    }
}
