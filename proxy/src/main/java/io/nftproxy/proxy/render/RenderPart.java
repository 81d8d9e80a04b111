package io.nftproxy.proxy.render;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;

/** A part of one family's render, writing into one fragment, with the names its code uses throughout. */
abstract class RenderPart {
    final FragmentBuilder b;
    final IpFamily f;
    final Family nf;
    /** The table's name. */
    final String t;
    final NodeInfo node;
    final RuleParts p;
    final ProxyConfig config;

    RenderPart(FragmentBuilder b) {
        this.b = b;
        this.f = b.f;
        this.nf = b.nf;
        this.t = b.t;
        this.node = b.node;
        this.p = b.p;
        this.config = b.config;
    }
}
