package io.nftproxy.proxy.health;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.proxy.nodesetup.Procfs;

/**
 * The addresses of this node's interfaces, in the namespace the proxy programs, as kube-proxy's
 * {@code GetNodeIPs} lists them to open healthCheckNodePort servers on. IPv4 from the JDK (an
 * ioctl on a socket of the calling thread, so the namespace it is in); IPv6 from
 * {@code /proc/thread-self/net/if_inet6}, since the JDK reads {@code /proc/net}, which is the
 * process's first thread's namespace, not the calling thread's. Link-local IPv6 addresses are
 * left out: a server on one needs its interface's scope.
 */
final class LocalAddresses {
    private LocalAddresses() {
    }

    static List<InetAddress> list(NetNamespace netns) throws IOException {
        return netns == null ? read() : netns.call(LocalAddresses::read);
    }

    private static List<InetAddress> read() throws IOException {
        List<InetAddress> out = new ArrayList<>();
        try {
            for (NetworkInterface i : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                for (InetAddress a : Collections.list(i.getInetAddresses())) {
                    if (a instanceof Inet4Address) {
                        out.add(a);
                    }
                }
            }
        } catch (SocketException e) {
            throw new IOException("listing this node's IPv4 addresses: " + e.getMessage(), e);
        }
        Path v6 = Path.of("/proc/thread-self/net/if_inet6");
        if (v6.toFile().exists()) {
            out.addAll(parseIfInet6(Procfs.read(v6)));
        }
        return out;
    }

    /** if_inet6's lines: address (32 hex digits), ifindex, prefix length, scope, flags, name. */
    static List<InetAddress> parseIfInet6(String text) {
        List<InetAddress> out = new ArrayList<>();
        for (String line : text.lines().toList()) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 4 || f[0].length() != 32 || f[3].equals("20")) { // scope 0x20: link-local
                continue;
            }
            try {
                out.add(InetAddress.getByAddress(HexFormat.of().parseHex(f[0])));
            } catch (UnknownHostException | IllegalArgumentException e) {
                // not an address: skipped
            }
        }
        return out;
    }
}
