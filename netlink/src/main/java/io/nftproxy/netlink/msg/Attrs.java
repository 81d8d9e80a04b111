package io.nftproxy.netlink.msg;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The attributes of one region of a message, parsed once. Lookups by type return the last
 * occurrence; {@link #all()} keeps repeated ones (lists) in order.
 */
public final class Attrs {
    /** One attribute: its type (flags stripped) and its payload. */
    public record Attr(int type, ByteBuffer value) {
        public Attrs nested() {
            return Attrs.parse(value);
        }

        public String string() {
            return Attrs.string(value);
        }

        public int be32() {
            return value.order(ByteOrder.BIG_ENDIAN).getInt(0 + need(4));
        }

        /** Refuses a value shorter than a field read from it: bytes from the kernel are input. */
        int need(int bytes) {
            if (value.remaining() < bytes) {
                throw new IllegalArgumentException("netlink attribute " + type + " has " + value.remaining()
                        + " bytes where " + bytes + " are read");
            }
            return 0;
        }

        public byte[] bytes() {
            byte[] b = new byte[value.remaining()];
            value.duplicate().get(b);
            return b;
        }
    }

    private final List<Attr> all;

    private Attrs(List<Attr> all) {
        this.all = all;
    }

    /** Parses the attributes in {@code region} from its position to its limit. */
    public static Attrs parse(ByteBuffer region) {
        ByteBuffer b = region.duplicate().order(ByteOrder.nativeOrder());
        List<Attr> out = new ArrayList<>();
        int pos = b.position();
        int end = b.limit();
        while (pos + Netlink.NLA_HDRLEN <= end) {
            int len = b.getShort(pos) & 0xffff;
            int type = b.getShort(pos + 2) & Netlink.NLA_TYPE_MASK;
            if (len < Netlink.NLA_HDRLEN || pos + len > end) {
                throw new IllegalArgumentException("malformed netlink attribute at offset " + pos
                        + " (length " + len + ", region ends at " + end + ")");
            }
            ByteBuffer v = b.duplicate();
            v.position(pos + Netlink.NLA_HDRLEN).limit(pos + len);
            out.add(new Attr(type, v.slice().order(ByteOrder.nativeOrder())));
            pos += Netlink.align(len);
        }
        return new Attrs(out);
    }

    public List<Attr> all() {
        return all;
    }

    public Attr find(int type) {
        for (int i = all.size() - 1; i >= 0; i--) {
            if (all.get(i).type() == type) {
                return all.get(i);
            }
        }
        return null;
    }

    public boolean has(int type) {
        return find(type) != null;
    }

    public ByteBuffer get(int type) {
        Attr a = find(type);
        return a == null ? null : a.value();
    }

    public String string(int type) {
        Attr a = find(type);
        return a == null ? null : a.string();
    }

    public int be32(int type, int dflt) {
        Attr a = find(type);
        return a == null ? dflt : a.be32();
    }

    public long be64(int type, long dflt) {
        Attr a = find(type);
        return a == null ? dflt : a.value().order(ByteOrder.BIG_ENDIAN).getLong(a.need(8));
    }

    public int u8(int type, int dflt) {
        Attr a = find(type);
        return a == null ? dflt : a.value().get(a.need(1)) & 0xff;
    }

    public byte[] bytes(int type) {
        Attr a = find(type);
        return a == null ? null : a.bytes();
    }

    public Attrs nested(int type) {
        Attr a = find(type);
        return a == null ? null : a.nested();
    }

    static String string(ByteBuffer v) {
        int n = v.remaining();
        byte[] b = new byte[n];
        v.duplicate().get(b);
        int end = 0;
        while (end < n && b[end] != 0) {
            end++;
        }
        return new String(b, 0, end, StandardCharsets.UTF_8);
    }
}
