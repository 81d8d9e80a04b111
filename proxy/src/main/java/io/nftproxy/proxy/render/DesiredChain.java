package io.nftproxy.proxy.render;

import java.util.List;

import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Rule;

/** A chain and the rules it should hold, in order. */
public record DesiredChain(Chain chain, List<Rule> rules) {
    public DesiredChain {
        rules = List.copyOf(rules);
    }
}
