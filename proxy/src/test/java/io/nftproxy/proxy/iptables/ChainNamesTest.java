package io.nftproxy.proxy.iptables;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePortName;

/** Chain names hashed as kube-proxy hashes them, checked against names kube-proxy writes. */
class ChainNamesTest {
    @Test
    void namesMatchKubeProxys() {
        ServicePortName p80 = new ServicePortName("ns1", "svc1", "p80", Protocol.TCP);
        assertEquals("ns1/svc1:p80", ChainNames.servicePortName(p80));
        assertEquals("KUBE-SVC-XPGD46QRK7WJZT7O", ChainNames.svc(p80));
        assertEquals("KUBE-EXT-XPGD46QRK7WJZT7O", ChainNames.ext(p80));
        assertEquals("KUBE-SEP-SXIVWICOYRO3J4NJ", ChainNames.sep(p80, Endpoint.ready(Inet.parse("10.180.0.1"), 80, "n")));
        assertEquals("ns1/svc1", ChainNames.servicePortName(new ServicePortName("ns1", "svc1", "", Protocol.TCP)));
    }

    @Test
    void base32IsRfc4648() {
        assertEquals("MZXW6YTBOI======", ChainNames.base32("foobar".getBytes()));
        assertEquals("", ChainNames.base32(new byte[0]));
    }
}
