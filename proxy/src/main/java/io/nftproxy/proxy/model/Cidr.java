package io.nftproxy.proxy.model;

import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;

import io.nftproxy.netlink.nft.Inet;

/** An IP prefix such as 10.244.0.0/16, normalised to its network address. */
public record Cidr(InetAddress network, int prefix) {
    public Cidr {
        int bits = network.getAddress().length * 8;
        if (prefix < 0 || prefix > bits) {
            throw new IllegalArgumentException("prefix /" + prefix + " out of range for " + network.getHostAddress());
        }
        network = mask(network, prefix);
    }

    public static Cidr parse(String s) {
        if (s == null) {
            throw new IllegalArgumentException("empty CIDR");
        }
        String t = s.trim();
        int slash = t.indexOf('/');
        if (slash < 0) {
            InetAddress a = Inet.parse(t);
            return new Cidr(a, a.getAddress().length * 8);
        }
        InetAddress a = Inet.parse(t.substring(0, slash));
        int p;
        try {
            p = Integer.parseInt(t.substring(slash + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid CIDR '" + s + "'");
        }
        return new Cidr(a, p);
    }

    private static InetAddress mask(InetAddress a, int prefix) {
        byte[] b = a.getAddress();
        for (int i = 0; i < b.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - i * 8));
            b[i] &= (byte) (0xff << (8 - keep));
        }
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    public IpFamily family() {
        return IpFamily.of(network);
    }

    public boolean contains(InetAddress a) {
        if (a.getAddress().length != network.getAddress().length) {
            return false;
        }
        return mask(a, prefix).equals(network);
    }

    /** One past the last address of the range, or null when the range ends at the top of the space. */
    public InetAddress endExclusive() {
        byte[] b = network.getAddress();
        BigInteger start = new BigInteger(1, b);
        BigInteger size = BigInteger.ONE.shiftLeft(b.length * 8 - prefix);
        BigInteger end = start.add(size);
        if (end.bitLength() > b.length * 8) {
            return null;
        }
        byte[] raw = end.toByteArray();
        byte[] out = new byte[b.length];
        System.arraycopy(raw, Math.max(0, raw.length - b.length), out, Math.max(0, b.length - raw.length),
                Math.min(raw.length, b.length));
        try {
            return InetAddress.getByAddress(out);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return Inet.format(network) + "/" + prefix;
    }
}
