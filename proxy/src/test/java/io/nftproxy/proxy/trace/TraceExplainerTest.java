package io.nftproxy.proxy.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.nftproxy.netlink.ct.ConntrackEntry;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NftTrace;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Meta;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/** What a trace's events say in the proxy's terms, for each way a packet can go, without a kernel. */
class TraceExplainerTest {
    private static final ServicePortName WEB = new ServicePortName("ns", "web", "http", Protocol.TCP);
    private static final ProxyState STATE = new ProxyState(Map.of(WEB, ServicePort.builder(WEB, 80)
            .clusterIPs(List.of(ip("10.96.0.10"))).nodePort(30080).externalIPs(List.of(ip("203.0.113.7")))
            .build()), Map.of(),
            NodeInfo.named("node-a"));
    /** A TCP SYN from 10.244.2.100:40000 to the given address and port. */
    private static final Bytes TCP_TO_CLUSTER_IP = Bytes.fromHex("4500003c00004000400600000af40264" + "0a60000a");

    private static InetAddress ip(String s) {
        return Inet.parse(s);
    }

    private static Bytes tcp(int dport) {
        return Bytes.concat(Bytes.be16(40000), Bytes.be16(dport), Bytes.fromHex("000000000000000050020000"));
    }

    private static NftTrace first(Bytes network, Bytes transport) {
        return new NftTrace(1, NftTrace.Type.RULE, Family.IP, "nftproxy", "trace-prerouting-1", 2, Verdict.CONTINUE, -1, 4,
                1, 0, 0, 0, 2, network, transport);
    }

    private static NftTrace rule(String chain, long handle, Verdict v) {
        return new NftTrace(1, NftTrace.Type.RULE, Family.IP, "nftproxy", chain, handle, v, -1, 0, 0, 0, 0, 0, 2, null, null);
    }

    private static final TraceExplainer EXPLAINER = new TraceExplainer("nftproxy",
            (f, chain, handle) -> chain.endsWith("-unserved") ? "... @no-endpoint-reject reject" : "rule " + handle,
            i -> i == 4 ? "eth0" : null, 1 << 14);

    static Stream<Arguments> paths() {
        ConntrackEntry toEndpoint = new ConntrackEntry(6, ip("10.244.2.100"), ip("10.96.0.10"), 40000, 80, ip("10.244.1.3"),
                ip("10.244.2.100"), 8080, 40000);
        return Stream.of(
                Arguments.of("to an endpoint", List.of(rule("services", 5, Verdict.goTo("pick-1")), rule("pick-1", 9, Verdict.ACCEPT)),
                        toEndpoint, "service ns/web port http (tcp) via its ClusterIP: endpoint 10.244.1.3:8080; "
                                + "no masquerade: the source is kept"),
                Arguments.of("masqueraded", List.of(rule("services", 4, Verdict.jump("mark-for-masquerade")),
                        rule("mark-for-masquerade", 1, Verdict.CONTINUE), rule("pick-1", 9, Verdict.ACCEPT)), toEndpoint,
                        "service ns/web port http (tcp) via its ClusterIP: endpoint 10.244.1.3:8080; "
                                + "masquerade mark set: the source is SNATed"),
                Arguments.of("rejected", List.of(rule("service-endpoints-unserved", 3, Verdict.DROP)), null,
                        "service ns/web port http (tcp) via its ClusterIP: rejected: the service port has no endpoints"),
                Arguments.of("Local, none here", List.of(rule("ext-ns/web/tcp/80", 7, Verdict.DROP)), null,
                        "service ns/web port http (tcp) via its ClusterIP: dropped: externalTrafficPolicy Local and no endpoint on this node"),
                Arguments.of("source ranges", List.of(rule("firewall-shard-40", 2, Verdict.DROP)), null,
                        "service ns/web port http (tcp) via its ClusterIP: dropped: the source is outside the service's loadBalancerSourceRanges"),
                Arguments.of("nothing of ours", List.of(rule("nat-prerouting", 1, Verdict.jump("services"))), null,
                        "service ns/web port http (tcp) via its ClusterIP: no connection tracked (the packet did not open one)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("paths")
    void theOutcomeInTheProxysTerms(String what, List<NftTrace> path, ConntrackEntry conn, String outcome) {
        List<NftTrace> events = new ArrayList<>();
        events.add(first(TCP_TO_CLUSTER_IP, tcp(80)));
        events.addAll(path);
        TraceExplainer.Explanation e = EXPLAINER.explain(events, STATE, conn);
        assertEquals(outcome, e.outcome(), what);
        assertTrue(e.lines().get(0).startsWith("trace 00000001  tcp 10.244.2.100:40000 -> 10.96.0.10:80  in eth0  hook prerouting"),
                e.lines().get(0));
        assertEquals(path.size() + 2, e.lines().size(), "a line per event of ours (the marking rule's is not), and the outcome");
    }

    @Test
    void servicesAreFoundByEveryFrontendAndTheirNodePort() {
        assertEquals("service ns/web port http (tcp) via its external IP",
                TraceExplainer.service(new TracedPacket(6, ip("192.0.2.1"), 1, ip("203.0.113.7"), 80), STATE));
        assertEquals("service ns/web port http (tcp) via its NodePort",
                TraceExplainer.service(new TracedPacket(6, ip("192.0.2.1"), 1, ip("192.168.50.2"), 30080), STATE));
        assertNull(TraceExplainer.service(new TracedPacket(17, ip("192.0.2.1"), 1, ip("10.96.0.10"), 80), STATE), "UDP: no");
        assertNull(TraceExplainer.service(new TracedPacket(6, ip("192.0.2.1"), 1, ip("10.96.0.10"), 80), null), "no model");
    }

    @Test
    void packetsAreReadFromTheirHeaders() {
        assertEquals("tcp 10.244.2.100:40000 -> 10.96.0.10:80", TracedPacket.of(TCP_TO_CLUSTER_IP, tcp(80)).toString());
        Bytes v6 = Bytes.concat(Bytes.fromHex("6000000000143a40"), Bytes.ip("fd00:244::2"), Bytes.ip("fd00:96::a"));
        assertEquals("proto 58 fd00:244::2 -> fd00:96::a", TracedPacket.of(v6, null).toString());
        Bytes v6tcp = Bytes.concat(Bytes.fromHex("6000000000140640"), Bytes.ip("fd00:244::2"), Bytes.ip("fd00:96::a"));
        assertEquals("tcp [fd00:244::2]:40000 -> [fd00:96::a]:80", TracedPacket.of(v6tcp, tcp(80)).toString());
        assertNull(TracedPacket.of(Bytes.fromHex("4500"), null), "too short to say");
    }

    @Test
    void theFilterMarksWhatItSelectsInEachFamily() {
        TraceFilter f = new TraceFilter(ip("10.244.2.100"), List.of(new TraceFilter.Destination(ip("10.96.0.10"), 80),
                new TraceFilter.Destination(ip("fd00:96::a"), 80), new TraceFilter.Destination(null, 30080)), Protocol.TCP);
        assertTrue(f.covers(IpFamily.V4));
        assertEquals(false, f.covers(IpFamily.V6), "the source is IPv4");
        assertEquals(2, f.rules(IpFamily.V4).size(), "the IPv4 ClusterIP and the NodePort");
        List<?> last = f.rules(IpFamily.V4).get(0);
        assertEquals(new Meta(Meta.NFT_META_NFTRACE, 1, true), last.get(last.size() - 1), "ends by setting nftrace");
        assertEquals(1, new TraceFilter(null, List.of(), null).rules(IpFamily.V6).size(), "no filter: one rule marking all");
        assertThrows(IllegalArgumentException.class,
                () -> new TraceFilter(null, List.of(new TraceFilter.Destination(null, 80)), null), "a port without a protocol");
    }
}
