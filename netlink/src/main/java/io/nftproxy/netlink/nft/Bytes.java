package io.nftproxy.netlink.nft;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.HexFormat;

/** An immutable byte string with value equality: keys, data and compare operands. */
public final class Bytes implements Comparable<Bytes> {
    private static final HexFormat HEX = HexFormat.of();
    private final byte[] b;
    private int hash; // 0: not computed yet

    private Bytes(byte[] b) {
        this.b = b;
    }

    public static Bytes of(byte... b) {
        return new Bytes(b.clone());
    }

    /** Takes the array as it is: for callers in this package that made it and never change it. */
    static Bytes wrap(byte[] b) {
        return new Bytes(b);
    }

    /** Copies the bytes into {@code dst} from {@code off}. */
    public void copyTo(byte[] dst, int off) {
        System.arraycopy(b, 0, dst, off, b.length);
    }

    /** Whether {@code a} holds these bytes from {@code off}. */
    public boolean equalsRange(byte[] a, int off) {
        return off + b.length <= a.length && Arrays.equals(b, 0, b.length, a, off, off + b.length);
    }

    /** A 16-bit field (a port): a value that does not fit is refused, never silently cut. */
    public static Bytes be16(int v) {
        if (v < 0 || v > 0xffff) {
            throw new IllegalArgumentException(v + " does not fit in 16 bits");
        }
        return new Bytes(new byte[] {(byte) (v >>> 8), (byte) v});
    }

    public static Bytes be32(int v) {
        return new Bytes(new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v});
    }

    /** A 32-bit value in host byte order (meta mark, numgen results and other host-order registers). */
    public static Bytes host32(int v) {
        return new Bytes(new byte[] {(byte) v, (byte) (v >>> 8), (byte) (v >>> 16), (byte) (v >>> 24)});
    }

    public static Bytes u8(int v) {
        return new Bytes(new byte[] {(byte) v});
    }

    public static Bytes ip(InetAddress a) {
        return new Bytes(a.getAddress());
    }

    /** Parses a literal IPv4 or IPv6 address (no name resolution). */
    public static Bytes ip(String literal) {
        return new Bytes(Inet.parse(literal).getAddress());
    }

    public static Bytes concat(Bytes... parts) {
        int n = 0;
        for (Bytes p : parts) {
            n += p.b.length;
        }
        byte[] out = new byte[n];
        int o = 0;
        for (Bytes p : parts) {
            System.arraycopy(p.b, 0, out, o, p.b.length);
            o += p.b.length;
        }
        return new Bytes(out);
    }

    /** Pads to a multiple of 4 bytes, as each field of a concatenated key is laid out in registers. */
    public Bytes padTo4() {
        int n = (b.length + 3) & ~3;
        return n == b.length ? this : new Bytes(Arrays.copyOf(b, n));
    }

    public static Bytes fromHex(String hex) {
        return new Bytes(HEX.parseHex(hex));
    }

    public byte[] toArray() {
        return b.clone();
    }

    public int length() {
        return b.length;
    }

    public int get(int i) {
        return b[i] & 0xff;
    }

    public Bytes slice(int from, int to) {
        return new Bytes(Arrays.copyOfRange(b, from, to));
    }

    public int be16At(int off) {
        return ((b[off] & 0xff) << 8) | (b[off + 1] & 0xff);
    }

    public int be32At(int off) {
        return ((b[off] & 0xff) << 24) | ((b[off + 1] & 0xff) << 16) | ((b[off + 2] & 0xff) << 8) | (b[off + 3] & 0xff);
    }

    public int host32At(int off) {
        return (b[off] & 0xff) | ((b[off + 1] & 0xff) << 8) | ((b[off + 2] & 0xff) << 16) | ((b[off + 3] & 0xff) << 24);
    }

    public InetAddress toInet() {
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(b.length + " bytes is not an address", e);
        }
    }

    public String hex() {
        return HEX.formatHex(b);
    }

    /** Unsigned lexicographic order: the order of keys in the kernel's ordered sets. */
    @Override
    public int compareTo(Bytes o) {
        return Arrays.compareUnsigned(b, o.b);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Bytes other && Arrays.equals(b, other.b);
    }

    /**
     * FNV-1a over the bytes, then murmur3's finaliser. Arrays.hashCode (31 * h + b) is not used:
     * on the proxy's map keys (address . protocol . port . index, mostly zero padding) it gave
     * 14,340 distinct values for 100,000 keys, and the diff's hash maps degenerated into trees.
     */
    @Override
    public int hashCode() {
        int h = hash;
        if (h == 0) {
            h = hash(b, 0, b.length);
            hash = h;
        }
        return h;
    }

    /** The hash {@link #hashCode} gives the bytes {@code a[from, to)}: for stores that keep keys as bytes. */
    public static int hash(byte[] a, int from, int to) {
        int h = 0x811c9dc5;
        for (int i = from; i < to; i++) {
            h = (h ^ (a[i] & 0xff)) * 0x01000193;
        }
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        h ^= h >>> 16;
        return h == 0 ? 1 : h;
    }

    @Override
    public String toString() {
        return "0x" + hex();
    }
}
