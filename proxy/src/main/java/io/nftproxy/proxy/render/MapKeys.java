package io.nftproxy.proxy.render;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Inet;

/**
 * The byte layout of the keys and data in the shared maps, in one place: the renderer writes
 * them and the connection counters read them back. Every field is padded to 4 bytes, as nf_tables
 * lays out concatenations in registers.
 */
public final class MapKeys {
    private MapKeys() {
    }

    /** {@code address . protocol . port}: a ClusterIP, external or load-balancer IP port. */
    public static Bytes frontend(InetAddress a, int proto, int port) {
        return Bytes.concat(Bytes.ip(a).padTo4(), Bytes.u8(proto).padTo4(), Bytes.be16(port).padTo4());
    }

    /** The address, protocol number and port a {@link #frontend} key was made of. */
    public record Frontend(InetAddress address, int proto, int port) {
    }

    /** The inverse of {@link #frontend}; the address is null in a {@link #nodePort} key (8 bytes). */
    public static Frontend decodeFrontend(Bytes key) {
        byte[] b = key.toArray();
        int n = b.length - 8;
        try {
            InetAddress a = n == 0 ? null : InetAddress.getByAddress(Arrays.copyOf(b, n));
            return new Frontend(a, b[n] & 0xff, (b[n + 4] & 0xff) << 8 | b[n + 5] & 0xff);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not a frontend key: " + key, e);
        }
    }

    /** {@code protocol . port}: a NodePort. */
    public static Bytes nodePort(int proto, int port) {
        return Bytes.concat(Bytes.u8(proto).padTo4(), Bytes.be16(port).padTo4());
    }

    /** {@code endpoint address . port}: the data the endpoint maps hold. */
    public static Bytes endpoint(InetAddress a, int port) {
        return endpoint(Bytes.ip(a), port);
    }

    /**
     * "address:port" ("[address]:port" for IPv6) of an endpoint map's data, "address . port" as
     * {@link #endpoint} lays it out for addresses of {@code addressBytes}; null for other bytes.
     */
    public static String endpointText(Bytes b, int addressBytes) {
        if (b.length() != addressBytes + 4) {
            return null;
        }
        try {
            String a = Inet.format(InetAddress.getByAddress(b.slice(0, addressBytes).toArray()));
            return (addressBytes == 16 ? "[" + a + "]" : a) + ":" + b.be16At(addressBytes);
        } catch (UnknownHostException e) {
            return null;
        }
    }

    /** The same, of an address already in bytes (an endpoint holds its own so). */
    public static Bytes endpoint(Bytes ip, int port) {
        return Bytes.concat(ip.padTo4(), Bytes.be16(port).padTo4());
    }

    /**
     * {@code service IP . protocol . port . endpoint address . port}: an endpoint of a service
     * port with chains of its own, as {@link TableNames#CHAIN_ENDPOINTS} counts it.
     */
    public static Bytes chainEndpoint(InetAddress serviceIp, int proto, int port, InetAddress endpoint, int endpointPort) {
        return Bytes.concat(frontend(serviceIp, proto, port), endpoint(endpoint, endpointPort));
    }
}
