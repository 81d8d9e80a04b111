package io.nftproxy.proxy.model;

import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

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

    @Override
    public String toString() {
        return Inet.format(network) + "/" + prefix;
    }

    /** Addresses from {@code start} up to, not including, {@code endExclusive} (null: to the top of the space). */
    public record Range(InetAddress start, InetAddress endExclusive) {
        /** The range's last address (an inclusive end, as a concatenation's range element has). */
        public InetAddress last() {
            int bytes = start.getAddress().length;
            BigInteger end = endExclusive == null ? BigInteger.ONE.shiftLeft(bytes * 8)
                    : new BigInteger(1, endExclusive.getAddress());
            return address(end.subtract(BigInteger.ONE), bytes);
        }
    }

    /**
     * The addresses the CIDRs cover, as the fewest ranges: overlapping and adjacent ones merged,
     * in address order. An interval set holds exactly these (the kernel refuses overlapping
     * intervals). All of one family.
     */
    public static List<Range> merge(List<Cidr> cidrs) {
        return merge(cidrs, null);
    }

    /** As {@link #merge(List)}, without the addresses of {@code except} (null: none; another family's: none). */
    public static List<Range> merge(List<Cidr> cidrs, Cidr except) {
        List<BigInteger[]> ranges = new ArrayList<>();
        int bytes = 0;
        for (Cidr c : cidrs) {
            int b = c.network().getAddress().length;
            if (bytes != 0 && b != bytes) {
                throw new IllegalArgumentException("CIDRs of two families: " + cidrs);
            }
            bytes = b;
            BigInteger start = new BigInteger(1, c.network().getAddress());
            ranges.add(new BigInteger[] {start, start.add(BigInteger.ONE.shiftLeft(b * 8 - c.prefix()))});
        }
        ranges.sort(Comparator.comparing((BigInteger[] r) -> r[0]));
        List<BigInteger[]> merged = new ArrayList<>();
        for (BigInteger[] r : ranges) {
            BigInteger[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
            if (last != null && last[1].compareTo(r[0]) >= 0) {
                last[1] = last[1].max(r[1]);
            } else {
                merged.add(r.clone());
            }
        }
        if (except != null && except.network().getAddress().length == bytes) {
            BigInteger holeStart = new BigInteger(1, except.network().getAddress());
            BigInteger holeEnd = holeStart.add(BigInteger.ONE.shiftLeft(bytes * 8 - except.prefix()));
            List<BigInteger[]> kept = new ArrayList<>();
            for (BigInteger[] r : merged) {
                if (r[0].compareTo(holeStart) < 0) {
                    kept.add(new BigInteger[] {r[0], r[1].min(holeStart)});
                }
                if (r[1].compareTo(holeEnd) > 0) {
                    kept.add(new BigInteger[] {r[0].max(holeEnd), r[1]});
                }
            }
            merged = kept;
        }
        BigInteger top = BigInteger.ONE.shiftLeft(bytes * 8);
        List<Range> out = new ArrayList<>();
        for (BigInteger[] r : merged) {
            out.add(new Range(address(r[0], bytes), r[1].compareTo(top) < 0 ? address(r[1], bytes) : null));
        }
        return out;
    }

    private static InetAddress address(BigInteger v, int bytes) {
        byte[] raw = v.toByteArray();
        byte[] out = new byte[bytes];
        int n = Math.min(raw.length, bytes);
        System.arraycopy(raw, raw.length - n, out, bytes - n, n);
        try {
            return InetAddress.getByAddress(out);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
