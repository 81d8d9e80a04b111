package io.nftproxy.proxy.model;

import java.net.Inet4Address;
import java.net.InetAddress;

import io.nftproxy.netlink.nft.Family;

/** IPv4 or IPv6: each has its own nf_tables table. */
public enum IpFamily {
    V4(Family.IP, 4), V6(Family.IP6, 16);

    private final Family nft;
    private final int addressBytes;

    IpFamily(Family nft, int addressBytes) {
        this.nft = nft;
        this.addressBytes = addressBytes;
    }

    public Family nft() {
        return nft;
    }

    public int addressBytes() {
        return addressBytes;
    }

    public static IpFamily of(InetAddress a) {
        return a instanceof Inet4Address ? V4 : V6;
    }

    public boolean contains(InetAddress a) {
        return of(a) == this;
    }
}
