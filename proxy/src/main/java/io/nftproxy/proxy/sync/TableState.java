package io.nftproxy.proxy.sync;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.render.DesiredChain;
import io.nftproxy.proxy.render.Fragment;

/**
 * What we committed to one family's table, kept in memory so a sync never has to list the kernel's
 * table: the fragments by contributor and, derived from them, every chain, set and element with
 * the number of contributors that want it (a ClusterIP shared by several ports, an endpoint in
 * several services). Changed only after the kernel accepted a transaction.
 */
final class TableState {
    final IpFamily family;
    final Table table;
    final Map<Contributor, Fragment> fragments = new HashMap<>();
    /** Changed through {@link #putChain} and {@link #removeChain}, which keep the rule count. */
    final Map<String, DesiredChain> chains = new HashMap<>();
    /**
     * The rules of {@link #chains}, kept as they change: summing them after every sync walked
     * every chain, most of a one-service change's time at 100k services with a fifth of them
     * owning chains.
     */
    private int rules;
    final Map<String, NftSet> sets = new HashMap<>();
    final Set<String> unmanagedSets = new HashSet<>();
    /** Per set, every element we committed and how many fragments contribute it. */
    final Map<String, ElementTable> elements = new HashMap<>();
    final Map<String, Contributor> chainOwner = new HashMap<>();

    TableState(IpFamily family, Table table) {
        this.family = family;
        this.table = table;
    }

    int chainCount() {
        return chains.size();
    }

    int ruleCount() {
        return rules;
    }

    void putChain(DesiredChain c) {
        DesiredChain was = chains.put(c.chain().name(), c);
        rules += c.rules().size() - (was == null ? 0 : was.rules().size());
    }

    void removeChain(String name) {
        DesiredChain was = chains.remove(name);
        if (was != null) {
            rules -= was.rules().size();
        }
    }

    int elementCount() {
        return elements.values().stream().mapToInt(ElementTable::size).sum();
    }
}
