package io.nftproxy.proxy.render;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import io.nftproxy.netlink.nft.Table;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * Everything the proxy wants in one family's table: chains and sets by name, in a stable order,
 * and which service each per-service chain belongs to (to name it when the kernel refuses one).
 */
public record FamilyRuleset(IpFamily family, Table table, Map<String, DesiredChain> chains,
                            Map<String, DesiredSet> sets, Map<String, ServicePortName> owners) {
    public FamilyRuleset {
        chains = Collections.unmodifiableMap(new LinkedHashMap<>(chains));
        sets = Collections.unmodifiableMap(new LinkedHashMap<>(sets));
        owners = Map.copyOf(owners);
    }

    public int ruleCount() {
        return chains.values().stream().mapToInt(c -> c.rules().size()).sum();
    }

    public int elementCount() {
        return sets.values().stream().mapToInt(s -> s.elements().size()).sum();
    }
}
