package io.nftproxy.proxy.nodesetup;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Immediate;

/**
 * The rules kube-proxy leaves when it stops, found and removed over netlink, as kube-proxy
 * removes the other modes' rules when it starts: its nftables mode's tables ({@code ip kube-proxy},
 * {@code ip6 kube-proxy}), and its iptables mode's chains as iptables-nft keeps them (chains
 * KUBE-SERVICES, KUBE-SVC-..., in the {@code nat}, {@code filter} and {@code mangle} tables of
 * {@code ip} and {@code ip6}, and the rules that jump to them). Left behind, they keep handling
 * service traffic with endpoints that no longer change: replacing kube-proxy's image in its
 * DaemonSet leaves exactly that on every node.
 *
 * <p>The kubelet's own chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-MARK-DROP) and every other
 * rule stay. Rules in x_tables (iptables-legacy) are out of reach of nf_tables: they are said, not
 * removed.
 */
public final class KubeProxyLeftovers {
    private static final Logger LOG = LoggerFactory.getLogger(KubeProxyLeftovers.class);
    /** kube-proxy's nftables mode's table, in ip and ip6. */
    static final String KUBE_PROXY_TABLE = "kube-proxy";
    static final List<String> IPTABLES_TABLES = List.of("nat", "filter", "mangle");
    /** kube-proxy's iptables mode's chains, by name (kube-proxy's iptables proxier). */
    static final Set<String> CHAINS = Set.of("KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING",
            "KUBE-MARK-MASQ", "KUBE-FORWARD", "KUBE-PROXY-FIREWALL", "KUBE-PROXY-CANARY");
    /** ... and by prefix: a service's, its endpoints', its external and firewall chains. */
    static final List<String> PREFIXES = List.of("KUBE-SVC-", "KUBE-SVL-", "KUBE-EXT-", "KUBE-FW-", "KUBE-SEP-", "KUBE-XLB-");

    private KubeProxyLeftovers() {
    }

    static boolean isKubeProxyChain(String name) {
        return CHAINS.contains(name) || PREFIXES.stream().anyMatch(name::startsWith);
    }

    /**
     * The transaction that removes kube-proxy's leftovers, given iptables-nft's tables as they are
     * and kube-proxy's nftables tables that exist. A pure function: the rules that jump to one of
     * kube-proxy's chains from a chain that stays are deleted, then kube-proxy's chains are flushed
     * (which drops their jumps to one another) and deleted.
     */
    public static Transaction plan(List<TableContents> iptablesTables, List<Table> kubeProxyTables) {
        Transaction tx = new Transaction();
        for (TableContents t : iptablesTables) {
            Set<String> gone = new HashSet<>();
            for (Chain c : t.chains()) {
                if (isKubeProxyChain(c.name())) {
                    gone.add(c.name());
                }
            }
            if (gone.isEmpty()) {
                continue;
            }
            for (Rule r : t.rules()) {
                if (!gone.contains(r.chain()) && jumpsTo(r, gone)) {
                    tx.delete(r);
                }
            }
            for (Chain c : t.chains()) {
                if (gone.contains(c.name())) {
                    tx.flush(c);
                }
            }
            for (Chain c : t.chains()) {
                if (gone.contains(c.name())) {
                    tx.delete(c);
                }
            }
        }
        for (Table t : kubeProxyTables) {
            tx.delete(t);
        }
        return tx;
    }

    private static boolean jumpsTo(Rule r, Set<String> chains) {
        for (Expr e : r.exprs()) {
            if (e instanceof Immediate i && i.data() instanceof Verdict v && v.chain() != null && chains.contains(v.chain())) {
                return true;
            }
        }
        return false;
    }

    /** Reads what is there, removes kube-proxy's leftovers in one transaction, and says what it removed. */
    public static void remove(NftClient client) {
        try {
            List<TableContents> iptables = new ArrayList<>();
            List<Table> kubeProxy = new ArrayList<>();
            for (Family f : List.of(Family.IP, Family.IP6)) {
                for (String name : IPTABLES_TABLES) {
                    if (client.hasTable(f, name)) {
                        iptables.add(client.readTable(f, name));
                    }
                }
                if (client.hasTable(f, KUBE_PROXY_TABLE)) {
                    kubeProxy.add(new Table(f, KUBE_PROXY_TABLE));
                }
            }
            Transaction tx = plan(iptables, kubeProxy);
            if (tx.ops().isEmpty()) {
                return;
            }
            client.commit(tx);
            long chains = tx.ops().stream().filter(o -> o.verb() == Op.Verb.DELETE
                    && o.object() instanceof Chain).count();
            LOG.info("removed what kube-proxy left: {} iptables chains (and the rules jumping to them){}", chains,
                    kubeProxy.isEmpty() ? "" : ", its nftables tables " + kubeProxy.stream().map(Table::toString).toList());
        } catch (NftException | RuntimeException e) {
            LOG.warn("could not remove what kube-proxy left (its rules may still handle service traffic; run kube-proxy"
                    + " --cleanup with kube-proxy's image): {}", e.getMessage());
        }
    }
}
