package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.nft.print.NftPrinter;
import java.util.List;
import java.util.Map;

/** Everything in one table as read back from the kernel. Elements are keyed by set name. */
public record TableContents(Table table, List<Chain> chains, List<NftSet> sets, Map<String, List<SetElement>> elements,
                            List<Rule> rules) {
    public TableContents {
        chains = List.copyOf(chains);
        sets = List.copyOf(sets);
        elements = Map.copyOf(elements);
        rules = List.copyOf(rules);
    }

    public List<Rule> rulesOf(String chain) {
        return rules.stream().filter(r -> r.chain().equals(chain)).toList();
    }

    @Override
    public String toString() {
        return NftPrinter.table(this);
    }
}
