package io.nftproxy.proxy.iptables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * The reference backend's conversation with iptables, recorded: what it restores, which chains it
 * deletes and when it adds the jumps from the built-in chains. (`ConformanceKernelTest` and
 * `BesideKubeProxyKernelTest` run it against the kernel.)
 */
class IptablesSyncerTest {
    static final ProxyConfig CONFIG = ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse("192.168.50.2")))
            .clusterCIDRs(List.of(Cidr.parse("10.128.0.0/9"))).serviceCIDRs(List.of(Cidr.parse("10.96.0.0/12")))
            .minSyncPeriod(Duration.ZERO).build();

    /** {@code n} ClusterIP services of {@code k} endpoints each, on other nodes. */
    static ProxyState state(int n, int k) {
        Map<ServicePortName, ServicePort> svcs = new HashMap<>();
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>();
        for (int i = 0; i < n; i++) {
            ServicePortName id = new ServicePortName("ns", "svc-" + i, "http", Protocol.TCP);
            svcs.put(id, ServicePort.builder(id, 80).clusterIPs(List.of(Inet.parse("10.96.0." + (i + 1)))).build());
            List<Endpoint> list = new ArrayList<>();
            for (int j = 0; j < k; j++) {
                list.add(Endpoint.ready(Inet.parse("10.128." + i + "." + (j + 1)), 8080, "node-b"));
            }
            eps.put(id, list);
        }
        return new ProxyState(svcs, eps, NodeInfo.named("node-a"));
    }

    private record Call(List<String> cmd, String stdin) {
    }

    /** Records the calls; iptables-save shows a service chain an earlier process left; -C finds no jump. */
    private static final class FakeIptables implements IptablesSyncer.CommandRunner {
        final List<Call> calls = new ArrayList<>();
        String saved = "*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-LEFTOVER0000000 - [0:0]\nCOMMIT\n"
                + "*filter\n:INPUT ACCEPT [0:0]\n:KUBE-FORWARD - [0:0]\nCOMMIT\n";

        @Override
        public String run(List<String> cmd, String stdin) {
            calls.add(new Call(cmd, stdin));
            String tool = cmd.get(4);
            if (tool.endsWith("-save")) {
                return saved;
            }
            if (cmd.contains("-C")) {
                throw new IllegalStateException("iptables: Bad rule (does a matching rule exist in that chain?)");
            }
            return "";
        }

        List<Call> of(String tool) {
            return calls.stream().filter(c -> c.cmd().get(4).equals(tool)).toList();
        }
    }

    @Test
    void firstSyncDeletesLeftoversAndAddsTheJumpsOnceLaterSyncsDeleteWhatWent() {
        FakeIptables ipt = new FakeIptables();
        IptablesSyncer s = new IptablesSyncer(CONFIG, "node", ipt);
        ProxyState state = state(3, 2);
        s.sync(state, null);

        assertTrue(ipt.calls.stream().allMatch(c -> c.cmd().subList(0, 4).equals(List.of("ip", "netns", "exec", "node"))),
                "every command runs in the node's namespace");
        List<Call> restores = ipt.of("iptables-restore");
        assertEquals(2, restores.size(), "our chains first, so that the jumps to them can be added; then the ruleset");
        assertTrue(restores.stream().allMatch(c -> c.cmd().contains("--noflush")), "only our chains are declared, nothing else flushed");
        String ruleset = restores.get(1).stdin();
        assertTrue(ruleset.contains(":KUBE-SVC-LEFTOVER0000000 - [0:0]\n-X KUBE-SVC-LEFTOVER0000000"),
                "a service chain of an earlier process is deleted, as kube-proxy does:\n" + ruleset);
        int jumps = IptablesRenderer.JUMPS.size();
        assertEquals(jumps, ipt.of("iptables").stream().filter(c -> c.cmd().contains("-C")).count(), "each jump checked");
        assertEquals(jumps, ipt.of("iptables").stream().filter(c -> c.cmd().contains("-A")).count(), "and added when missing");
        assertEquals(2, ipt.of("ip6tables-restore").size(), "IPv6 likewise");
        for (String table : List.of("nat", "filter")) {
            String rendered = new IptablesRenderer(CONFIG).render(state, IpFamily.V4).restore();
            String block = rendered.substring(rendered.indexOf("*" + table + "\n"));
            block = block.substring(0, block.indexOf("COMMIT"));
            assertEquals(block.lines().filter(l -> l.startsWith("-A ")).count(), s.rules(IpFamily.V4, table),
                    "kube-proxy's iptables_total{table=" + table + "}: the rules of ours in it");
        }
        assertTrue(s.rules(IpFamily.V4, "nat") > 0 && s.rules(IpFamily.V4, "filter") > 0);

        // A service goes: its chains are deleted; the jumps are not touched again.
        ipt.calls.clear();
        Map<ServicePortName, ServicePort> fewer = new HashMap<>(state.services());
        ServicePortName gone = state.sortedServices().get(0).id();
        fewer.remove(gone);
        String before = new IptablesRenderer(CONFIG).render(state, IpFamily.V4).restore();
        s.sync(new ProxyState(fewer, state.endpoints(), state.node()), null);
        assertTrue(ipt.of("iptables").isEmpty(), "jumps are ensured once");
        assertTrue(ipt.of("iptables-save").isEmpty(), "what we created is known: no need to read it back");
        String second = ipt.of("iptables-restore").get(0).stdin();
        long deleted = second.lines().filter(l -> l.startsWith("-X KUBE-S")).count();
        assertTrue(deleted >= 3, "its service chain and its two endpoint chains go:\n" + second);
        second.lines().filter(l -> l.startsWith("-X ")).forEach(l ->
                assertTrue(before.contains(":" + l.substring(3) + " "), l + " was one of ours"));
        assertFalse(second.contains("LEFTOVER"), "deleted already");
    }

    @Test
    void cleanupRemovesTheJumpsAndEveryChainOfOurs() {
        FakeIptables ipt = new FakeIptables();
        IptablesSyncer s = new IptablesSyncer(CONFIG, "node", ipt);
        s.cleanup();
        assertEquals(IptablesRenderer.JUMPS.size(), ipt.of("iptables").stream().filter(c -> c.cmd().contains("-D")).count());
        String restore = ipt.of("iptables-restore").get(0).stdin();
        assertTrue(restore.contains("*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-LEFTOVER0000000 - [0:0]\n-X KUBE-SERVICES\n"), restore);
        assertTrue(restore.contains("*filter\n:KUBE-FORWARD - [0:0]\n-X KUBE-FORWARD\nCOMMIT"), restore);
        assertFalse(restore.contains("PREROUTING"), "built-in chains stay");
    }

    @Test
    void aServiceThatAsksForAHashIsToldOnceThatThisModePicksAtRandom() {
        ch.qos.logback.classic.Logger log = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(IptablesSyncer.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged =
                new ch.qos.logback.core.read.ListAppender<>();
        logged.start();
        log.addAppender(logged);
        try {
            IptablesSyncer syncer = new IptablesSyncer(CONFIG, "node", new FakeIptables());
            ProxyState plain = state(2, 2);
            ServicePortName first = plain.services().keySet().stream().sorted(java.util.Comparator.comparing(Object::toString))
                    .findFirst().orElseThrow();
            Map<ServicePortName, ServicePort> svcs = new HashMap<>(plain.services());
            svcs.put(first, svcs.get(first).toBuilder().algorithm(io.nftproxy.proxy.model.LbAlgorithm.MAGLEV).build());
            ProxyState hashed = new ProxyState(svcs, plain.endpoints(), plain.node());
            syncer.sync(hashed, null);
            syncer.sync(hashed, null);
            List<String> said = logged.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage).toList();
            assertEquals(List.of("service port " + first + " asks for service.nftproxy.io/lb-algorithm maglev: --mode iptables"
                    + " picks its endpoints at random"), said, "once, naming the port");
            syncer.sync(plain, null);
            syncer.sync(hashed, null);
            assertEquals(2, logged.list.size(), "said again once it asks again");
        } finally {
            log.detachAppender(logged);
        }
    }
}
