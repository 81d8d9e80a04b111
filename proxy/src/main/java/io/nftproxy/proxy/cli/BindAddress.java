package io.nftproxy.proxy.cli;

import java.net.InetSocketAddress;

import io.nftproxy.netlink.nft.Inet;

/** "host:port" and "[v6]:port" bind addresses, as kube-proxy takes them; empty turns a server off. */
final class BindAddress {
    private BindAddress() {
    }

    static boolean isOff(String s) {
        return s == null || s.isBlank();
    }

    static InetSocketAddress parse(String s, String flag) {
        int colon = s.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException(flag + " '" + s + "' is not host:port");
        }
        String host = s.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(s.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " '" + s + "': invalid port");
        }
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException(flag + " '" + s + "': port out of range");
        }
        try {
            return new InetSocketAddress(host.isEmpty() ? Inet.parse("0.0.0.0") : Inet.parse(host), port);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + " '" + s + "': " + e.getMessage(), e);
        }
    }
}
