package io.nftproxy.proxy.nodesetup;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Hook;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Immediate;

/** Which of kube-proxy's leftovers go, as a plan: its chains and the jumps to them; the kubelet's and others' stay. */
class KubeProxyLeftoversTest {
    static Rule jump(String chain, String to, long handle) {
        return new Rule(Family.IP, "nat", chain, List.of(Immediate.verdict(Verdict.jump(to))), null, handle);
    }

    @Test
    void kubeProxysChainsAndTheJumpsToThemGoTheRestStays() {
        Chain prerouting = Chain.base(Family.IP, "nat", "PREROUTING", "nat", Hook.PREROUTING, -100);
        TableContents nat = new TableContents(new Table(Family.IP, "nat"), List.of(prerouting,
                Chain.regular(Family.IP, "nat", "KUBE-SERVICES"), Chain.regular(Family.IP, "nat", "KUBE-SVC-ABC"),
                Chain.regular(Family.IP, "nat", "KUBE-SEP-DEF"), Chain.regular(Family.IP, "nat", "KUBE-MARK-DROP"),
                Chain.regular(Family.IP, "nat", "CNI-HOSTPORT")), List.of(), Map.of(),
                List.of(jump("PREROUTING", "KUBE-SERVICES", 1), jump("PREROUTING", "CNI-HOSTPORT", 2),
                        jump("PREROUTING", "KUBE-MARK-DROP", 3), jump("KUBE-SERVICES", "KUBE-SVC-ABC", 4),
                        jump("KUBE-SVC-ABC", "KUBE-SEP-DEF", 5)));
        Transaction tx = KubeProxyLeftovers.plan(List.of(nat), List.of(new Table(Family.IP6, "kube-proxy")));
        assertEquals(List.of("delete rule ip nat PREROUTING handle 1",
                "flush chain ip nat KUBE-SERVICES", "flush chain ip nat KUBE-SVC-ABC", "flush chain ip nat KUBE-SEP-DEF",
                "delete chain ip nat KUBE-SERVICES", "delete chain ip nat KUBE-SVC-ABC", "delete chain ip nat KUBE-SEP-DEF",
                "delete table ip6 kube-proxy"), tx.toString().lines().toList());
    }

    @Test
    void nothingLeftNothingToDo() {
        TableContents filter = new TableContents(new Table(Family.IP, "filter"),
                List.of(Chain.regular(Family.IP, "filter", "KUBE-FIREWALL")), List.of(), Map.of(), List.of());
        assertEquals(0, KubeProxyLeftovers.plan(List.of(filter), List.of()).ops().size());
    }
}
