package io.nftproxy.proxy.trace;

import java.net.InetAddress;
import java.net.UnknownHostException;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Protocol;

/**
 * The addresses and ports of a traced packet, read from the headers its trace's first event
 * carries. IPv6 extension headers are not followed: the protocol is the first next-header.
 */
public record TracedPacket(int protocol, InetAddress source, int sourcePort, InetAddress destination, int destinationPort) {

    /** Null when the headers are missing or too short to say. */
    public static TracedPacket of(Bytes network, Bytes transport) {
        if (network == null || network.length() < 20) {
            return null;
        }
        int version = network.get(0) >> 4;
        int proto;
        InetAddress src;
        InetAddress dst;
        try {
            if (version == 4) {
                proto = network.get(9);
                src = InetAddress.getByAddress(network.slice(12, 16).toArray());
                dst = InetAddress.getByAddress(network.slice(16, 20).toArray());
            } else if (version == 6 && network.length() >= 40) {
                proto = network.get(6);
                src = InetAddress.getByAddress(network.slice(8, 24).toArray());
                dst = InetAddress.getByAddress(network.slice(24, 40).toArray());
            } else {
                return null;
            }
        } catch (UnknownHostException e) {
            return null;
        }
        boolean ports = transport != null && transport.length() >= 4 && (proto == 6 || proto == 17 || proto == 132);
        return new TracedPacket(proto, src, ports ? transport.be16At(0) : 0, dst, ports ? transport.be16At(2) : 0);
    }

    /** The proxy's protocol, or null for one it does not proxy. */
    public Protocol proxied() {
        for (Protocol p : Protocol.values()) {
            if (p.number() == protocol) {
                return p;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        Protocol p = proxied();
        String name = p == null ? "proto " + protocol : p.lower();
        return name + " " + hostPort(source, sourcePort) + " -> " + hostPort(destination, destinationPort);
    }

    static String hostPort(InetAddress a, int port) {
        String h = Inet.format(a);
        return port == 0 ? h : (h.contains(":") ? "[" + h + "]" : h) + ":" + port;
    }
}
