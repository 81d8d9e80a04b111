package io.nftproxy.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.proxy.iptables.IptablesRenderer;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * What the bench sends to its peers for a change is what kube-proxy would send: the changed
 * service's chains and nothing else, in an order the kernel takes (references go before what
 * they reference is deleted). The loads themselves run against the kernel in `bench --quick` in CI.
 */
class PeerLayoutsTest {
    private static final ServicePortName SVC0 = new ServicePortName("bench", "svc-0", "http", Protocol.TCP);
    private static final ServicePortName SVC3 = new ServicePortName("bench", "svc-3", "http", Protocol.TCP);

    /** The state with endpoint 0 of svc-3 replaced. */
    static ProxyState oneEndpointReplaced(ProxyState s) {
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>(s.endpoints());
        List<Endpoint> l = new ArrayList<>(eps.get(SVC3));
        l.set(0, Endpoint.ready(BenchState.ip(0x0b000001), 8080, "node-x"));
        eps.put(SVC3, l);
        return new ProxyState(s.services(), eps, s.node());
    }

    @Test
    void kubeProxysNftablesLayoutChangesOnlyTheChangedService() {
        ProxyState s = BenchState.synthetic(5, 3, 0);
        KubeProxyNftLayout.Layout a = KubeProxyNftLayout.of(s);
        String full = KubeProxyNftLayout.full(a);
        assertTrue(full.startsWith("table ip kube-proxy-layout\ndelete table ip kube-proxy-layout\n"), "replaces the table whole");
        assertEquals(5, full.lines().filter(l -> l.contains("numgen random mod 3 vmap")).count(), "one vmap per service");
        assertEquals(15, full.lines().filter(l -> l.contains("dnat to")).count(), "one chain per endpoint");
        assertTrue(full.contains("tcp . 30000 : goto service-bench/svc-0/tcp/http"), "svc-0 has a NodePort");
        assertEquals("", KubeProxyNftLayout.delta(a, a), "no change, nothing sent");

        String delta = KubeProxyNftLayout.delta(a, KubeProxyNftLayout.of(oneEndpointReplaced(s)));
        List<String> lines = delta.lines().toList();
        assertTrue(lines.contains("add chain ip kube-proxy-layout endpoint-bench/svc-3/tcp/http__11.0.0.1"), delta);
        assertTrue(lines.contains("flush chain ip kube-proxy-layout service-bench/svc-3/tcp/http"), delta);
        assertFalse(delta.contains("svc-0") || delta.contains("element"), "other services and the maps untouched:\n" + delta);
        String gone = "endpoint-bench/svc-3/tcp/http__" + s.endpointsOf(SVC3).get(0).address().getHostAddress();
        int flushed = lines.indexOf("flush chain ip kube-proxy-layout service-bench/svc-3/tcp/http");
        int deleted = lines.indexOf("delete chain ip kube-proxy-layout " + gone);
        assertTrue(flushed >= 0 && deleted > flushed, "the old endpoint chain goes after the vmap that jumped to it:\n" + delta);

        Map<ServicePortName, ServicePort> fewer = new HashMap<>(s.services());
        fewer.remove(SVC0);
        String removed = KubeProxyNftLayout.delta(a, KubeProxyNftLayout.of(new ProxyState(fewer, s.endpoints(), s.node())));
        List<String> r = removed.lines().toList();
        int element = r.indexOf("delete element ip kube-proxy-layout service-ips { 10.96.0.1 . tcp . 80 }");
        int chain = r.indexOf("delete chain ip kube-proxy-layout service-bench/svc-0/tcp/http");
        assertTrue(element >= 0 && chain > element, "the map element goes before the chain it points to:\n" + removed);
        assertTrue(r.contains("delete element ip kube-proxy-layout service-nodeports { tcp . 30000 }"), removed);
    }

    @Test
    void kubeProxysNftablesLayoutHasAffinitySetsAndLocalExternalChains() {
        ProxyState s = BenchState.mixed(21, 3);
        KubeProxyNftLayout.Layout l = KubeProxyNftLayout.of(s);
        // svc-3, svc-10 and svc-17 have affinity: a dynamic set per endpoint, checked before the vmap.
        assertEquals(9, l.sets().size(), l.sets().keySet().toString());
        String aff = "affinity-bench/svc-3/tcp/http__" + s.endpointsOf(SVC3).get(0).address().getHostAddress();
        assertEquals("type ipv4_addr; flags dynamic,timeout; timeout 10800s;", l.sets().get(aff));
        List<String> svc3 = l.chains().get("service-bench/svc-3/tcp/http");
        assertTrue(svc3.get(1).startsWith("ip saddr @" + aff + " goto endpoint-"), svc3.toString());
        assertTrue(svc3.get(svc3.size() - 1).startsWith("numgen random mod 3 vmap"), "the vmap comes after the affinity checks");
        assertTrue(l.chains().get(aff.replace("affinity-", "endpoint-")).contains("update @" + aff + " { ip saddr }"));
        // svc-0 and svc-20 are NodePorts with traffic policy Local: the NodePort goes to an external
        // chain that picks among this node's endpoints only.
        assertEquals("goto external-bench/svc-0/tcp/http", l.nodePorts().get("tcp . 30000"));
        List<String> ext = l.chains().get("external-bench/svc-0/tcp/http");
        assertEquals("ip saddr 10.128.0.0/9 goto service-bench/svc-0/tcp/http", ext.get(0));
        assertTrue(ext.get(3).startsWith("numgen random mod 1 vmap"), "one endpoint of svc-0 is on node-a: " + ext);
        assertEquals("goto service-bench/svc-10/tcp/http", l.nodePorts().get("tcp . 30001"), "svc-10 is Cluster");

        // An affinity service's endpoint replaced: its set comes with its chain and goes after it.
        KubeProxyNftLayout.Layout b = KubeProxyNftLayout.of(oneEndpointReplaced(s));
        List<String> d = KubeProxyNftLayout.delta(l, b).lines().toList();
        int addSet = d.indexOf("add set ip kube-proxy-layout affinity-bench/svc-3/tcp/http__11.0.0.1"
                + " { type ipv4_addr; flags dynamic,timeout; timeout 10800s; }");
        int refill = d.indexOf("flush chain ip kube-proxy-layout service-bench/svc-3/tcp/http");
        int delChain = d.indexOf("delete chain ip kube-proxy-layout " + aff.replace("affinity-", "endpoint-"));
        int delSet = d.indexOf("delete set ip kube-proxy-layout " + aff);
        assertTrue(addSet >= 0 && addSet < refill && refill < delChain && delChain < delSet, String.join("\n", d));
        assertTrue(KubeProxyNftLayout.full(l).contains("\tset " + aff + " { type ipv4_addr;"), "declared in the full table");
    }

    @Test
    void kubeProxysNftablesLayoutFiltersLoadBalancerSourceRanges() {
        KubeProxyNftLayout.Layout l = KubeProxyNftLayout.of(BenchState.mixed(30, 3));
        // svc-25 is a load balancer with source ranges: its IP in the service map, and in the
        // firewall map to a chain that drops every other source.
        String key = BenchState.loadBalancerIP(25).getHostAddress() + " . tcp . 80";
        assertEquals("goto service-bench/svc-25/tcp/http", l.serviceIps().get(key));
        assertEquals("goto firewall-bench/svc-25/tcp/http", l.firewallIps().get(key));
        assertEquals(List.of("ip saddr != { 192.168.0.0/16, 172.16.0.0/12 } drop"), l.chains().get("firewall-bench/svc-25/tcp/http"));
        assertEquals(1, l.firewallIps().size(), "only svc-25 of 30");
        assertTrue(KubeProxyNftLayout.full(l).contains("ct state new ip daddr . meta l4proto . th dport vmap @firewall-ips"));
    }

    @Test
    void kubeProxysIptablesLayoutRestoresOnlyTheChangedServiceChains() {
        ProxyState s = BenchState.synthetic(5, 3, 0);
        IptablesRenderer r = new IptablesRenderer(BenchState.config());
        String before = r.render(s, IpFamily.V4).restore();
        String after = r.render(oneEndpointReplaced(s), IpFamily.V4).restore();
        String delta = IptablesLayout.delta(before, after);
        assertTrue(delta.contains(":KUBE-SERVICES - [0:0]"), "top-level chains are always restored");
        Map<String, Map<String, List<String>>> parsed = IptablesLayout.parse(delta);
        List<String> restored = parsed.get("nat").keySet().stream().filter(IptablesLayout::serviceChain).toList();
        assertFalse(restored.isEmpty(), delta);
        assertTrue(delta.contains("-X KUBE-SEP-"), "the replaced endpoint's chain is deleted:\n" + delta);
        for (String chain : restored) {
            boolean changed = !parsed.get("nat").get(chain).isEmpty()
                    && !parsed.get("nat").get(chain).equals(IptablesLayout.parse(before).get("nat").get(chain));
            boolean gone = delta.contains("-X " + chain + "\n");
            assertTrue(changed || gone, chain + " is restored although it did not change:\n" + delta);
        }
        assertEquals(0, IptablesLayout.delta(before, before).lines().filter(l -> l.startsWith("-X")).count(), "nothing deleted without a change");
    }

    @Test
    void theReportHasRatiosTablesAndPlots(@TempDir Path dir) throws Exception {
        List<CompareBench.Row> rows = List.of(
                new CompareBench.Row("sync", "nftproxy", 1000, "full", new long[] {100_000_000L}, ""),
                new CompareBench.Row("sync", "kube-nftables", 1000, "full", new long[] {800_000_000L}, ""),
                new CompareBench.Row("sync", "kube-iptables", 1000, "full", new long[0], "> budget 60 s"),
                new CompareBench.Row("connect", "nftproxy", 1000, "connect", new long[] {90_000L, 110_000L}, ""));
        Report.write(dir, rows, "bin/nftproxy bench --compare");
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("| 1000 | kube-nftables | 800 |"), md);
        assertTrue(md.contains("8.0×"), "the ratio to nftproxy:\n" + md);
        assertTrue(md.contains("> budget 60 s"), md);
        assertEquals(5, Files.readAllLines(dir.resolve("results.csv")).size(), "a header and a line per row");
        for (String png : List.of("sync.png", "connect.png")) {
            byte[] b = Files.readAllBytes(dir.resolve(png));
            assertTrue(b.length > 1000 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G', png + " is a PNG image");
        }
    }
}
