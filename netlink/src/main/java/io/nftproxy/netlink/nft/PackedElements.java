package io.nftproxy.netlink.nft;

import java.nio.charset.StandardCharsets;
import java.util.AbstractList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.RandomAccess;

/**
 * An immutable list of set elements kept as bytes: one array for all of them and an offset per
 * element, instead of an element, a key, its array, a data value, its key and its array per
 * element. A proxy holding a million elements keeps them this way (about 30 bytes each instead of
 * about 170); {@link #get} decodes an element when it is read, so it is for lists that are mostly
 * kept and rarely read.
 *
 * <p>One element's bytes (also the form {@link #pack} returns for one element alone):
 * a byte of {@code HAS_*} bits, the key (a length byte, the bytes), then as the bits say: the
 * interval end (length, bytes), a value (length, bytes) or a verdict (code as 4 bytes, chain
 * name length as 2 bytes with 0xffff for none, UTF-8), the timeout and the expiry (8 bytes each),
 * the flags (4 bytes), the comment (length, UTF-8). Multi-byte numbers are big-endian.
 */
public final class PackedElements extends AbstractList<SetElement> implements RandomAccess {
    private static final int HAS_KEY_END = 1;
    private static final int HAS_VALUE = 2;
    private static final int HAS_VERDICT = 4;
    private static final int HAS_TIMEOUT = 8;
    private static final int HAS_EXPIRES = 16;
    private static final int HAS_FLAGS = 32;
    private static final int HAS_COMMENT = 64;
    private static final int NO_CHAIN = 0xffff;
    /** The key starts here in every element's bytes, after the bits and the length. */
    public static final int KEY_OFFSET = 2;

    public static final PackedElements EMPTY = new PackedElements(new byte[0], new int[] {0}, 0, 0);

    private final byte[] bytes;
    /** Element i is bytes[offsets[first + i], offsets[first + i + 1]). */
    private final int[] offsets;
    /**
     * Where this list starts in {@link #offsets}: 0 for a list of its own, more for a list that is
     * a run of a larger packing (see {@link PackedElementsBySet}).
     */
    private final int first;
    private final int size;

    private PackedElements(byte[] bytes, int[] offsets, int first, int size) {
        this.bytes = bytes;
        this.offsets = offsets;
        this.first = first;
        this.size = size;
    }

    /** Elements first to first + size of a packing's arrays, as a list (they are not copied). */
    static PackedElements run(byte[] bytes, int[] offsets, int first, int size) {
        return size == 0 ? EMPTY : new PackedElements(bytes, offsets, first, size);
    }

    /** The same elements packed; a packed list is returned as it is. */
    public static PackedElements copyOf(Collection<SetElement> elements) {
        if (elements instanceof PackedElements p) {
            return p;
        }
        Builder b = new Builder(elements.size());
        for (SetElement e : elements) {
            b.add(e);
        }
        return b.build();
    }

    public static Builder builder() {
        return new Builder(8);
    }

    @Override
    public SetElement get(int i) {
        return decode(bytes, offset(i));
    }

    @Override
    public int size() {
        return size;
    }

    /** Packed lists compare as bytes: the packing of an element is canonical. */
    @Override
    public boolean equals(Object o) {
        if (o instanceof PackedElements p) {
            return p.size == size && Arrays.equals(bytes, offsets[first], offsets[first + size], p.bytes, p.offsets[p.first],
                    p.offsets[p.first + p.size]);
        }
        return super.equals(o);
    }

    @Override
    public int hashCode() {
        return super.hashCode();
    }

    /** Where element i starts in {@link #bytes}: for stores that keep or compare elements as bytes. */
    public int offset(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException(i + " of " + size);
        }
        return offsets[first + i];
    }

    public int length(int i) {
        return offsets[first + i + 1] - offset(i);
    }

    /** The shared array; read only. */
    public byte[] bytes() {
        return bytes;
    }

    /** Element i alone, in its packed form. */
    public byte[] packed(int i) {
        int o = offset(i);
        return Arrays.copyOfRange(bytes, o, offsets[first + i + 1]);
    }

    /** Adds elements to a new packed list, in order. */
    public static final class Builder {
        private byte[] bytes;
        private int[] offsets;
        private int size;

        private Builder(int expected) {
            bytes = new byte[Math.max(16, expected * 24)];
            offsets = new int[Math.max(2, expected + 1)];
        }

        public Builder add(SetElement e) {
            int need = packedLength(e);
            ensure(need);
            write(e, bytes, offsets[size]);
            next(need);
            return this;
        }

        /** Adds an element given in packed form, {@code length} bytes of {@code src} from {@code off}. */
        public Builder addPacked(byte[] src, int off, int length) {
            ensure(length);
            System.arraycopy(src, off, bytes, offsets[size], length);
            next(length);
            return this;
        }

        public Builder addPacked(byte[] packed) {
            return addPacked(packed, 0, packed.length);
        }

        public int size() {
            return size;
        }

        public PackedElements build() {
            if (size == 0) {
                return EMPTY;
            }
            int end = offsets[size];
            return new PackedElements(end == bytes.length ? bytes : Arrays.copyOf(bytes, end),
                    offsets.length == size + 1 ? offsets : Arrays.copyOf(offsets, size + 1), 0, size);
        }

        private void ensure(int more) {
            int end = offsets[size];
            if (end + more > bytes.length) {
                bytes = Arrays.copyOf(bytes, Math.max(end + more, bytes.length * 2));
            }
            if (size + 2 > offsets.length) {
                offsets = Arrays.copyOf(offsets, offsets.length * 2);
            }
        }

        private void next(int length) {
            offsets[size + 1] = offsets[size] + length;
            size++;
        }
    }

    // ---- one element's bytes ----

    /** One element in packed form. */
    public static byte[] pack(SetElement e) {
        byte[] out = new byte[packedLength(e)];
        write(e, out, 0);
        return out;
    }

    static int packedLength(SetElement e) {
        int n = KEY_OFFSET + e.key().length();
        if (e.key().length() > 0xff) {
            throw new IllegalArgumentException("a key of " + e.key().length() + " bytes is longer than any set's");
        }
        if (e.keyEnd() != null) {
            n += 1 + e.keyEnd().length();
        }
        if (e.data() instanceof Data.Value v) {
            if (v.bytes().length() > 0xff) {
                throw new IllegalArgumentException("data of " + v.bytes().length() + " bytes is longer than any map's");
            }
            n += 1 + v.bytes().length();
        } else if (e.data() instanceof Verdict vd) {
            n += 4 + 2 + (vd.chain() == null ? 0 : vd.chain().getBytes(StandardCharsets.UTF_8).length);
        }
        if (e.timeoutMs() != 0) {
            n += 8;
        }
        if (e.expiresMs() != 0) {
            n += 8;
        }
        if (e.flags() != 0) {
            n += 4;
        }
        if (e.comment() != null) {
            int c = e.comment().getBytes(StandardCharsets.UTF_8).length;
            if (c > 0xff) {
                throw new IllegalArgumentException("an element comment of " + c + " bytes: " + e.comment());
            }
            n += 1 + c;
        }
        return n;
    }

    static void write(SetElement e, byte[] out, int o) {
        int bits = (e.keyEnd() != null ? HAS_KEY_END : 0) | (e.data() instanceof Data.Value ? HAS_VALUE : 0)
                | (e.data() instanceof Verdict ? HAS_VERDICT : 0) | (e.timeoutMs() != 0 ? HAS_TIMEOUT : 0)
                | (e.expiresMs() != 0 ? HAS_EXPIRES : 0) | (e.flags() != 0 ? HAS_FLAGS : 0)
                | (e.comment() != null ? HAS_COMMENT : 0);
        out[o++] = (byte) bits;
        o = putShort(e.key(), out, o);
        if (e.keyEnd() != null) {
            o = putShort(e.keyEnd(), out, o);
        }
        if (e.data() instanceof Data.Value v) {
            o = putShort(v.bytes(), out, o);
        } else if (e.data() instanceof Verdict vd) {
            o = put32(vd.kind().code(), out, o);
            if (vd.chain() == null) {
                out[o++] = (byte) (NO_CHAIN >>> 8);
                out[o++] = (byte) NO_CHAIN;
            } else {
                byte[] name = vd.chain().getBytes(StandardCharsets.UTF_8);
                if (name.length >= NO_CHAIN) {
                    throw new IllegalArgumentException("a chain name of " + name.length + " bytes");
                }
                out[o++] = (byte) (name.length >>> 8);
                out[o++] = (byte) name.length;
                System.arraycopy(name, 0, out, o, name.length);
                o += name.length;
            }
        }
        if (e.timeoutMs() != 0) {
            o = put64(e.timeoutMs(), out, o);
        }
        if (e.expiresMs() != 0) {
            o = put64(e.expiresMs(), out, o);
        }
        if (e.flags() != 0) {
            o = put32(e.flags(), out, o);
        }
        if (e.comment() != null) {
            byte[] c = e.comment().getBytes(StandardCharsets.UTF_8);
            out[o++] = (byte) c.length;
            System.arraycopy(c, 0, out, o, c.length);
        }
    }

    /** A byte string no longer than 255 bytes: its length in one byte, then the bytes. */
    private static int putShort(Bytes b, byte[] out, int o) {
        out[o++] = (byte) b.length();
        b.copyTo(out, o);
        return o + b.length();
    }

    private static int put32(int v, byte[] out, int o) {
        out[o] = (byte) (v >>> 24);
        out[o + 1] = (byte) (v >>> 16);
        out[o + 2] = (byte) (v >>> 8);
        out[o + 3] = (byte) v;
        return o + 4;
    }

    private static int put64(long v, byte[] out, int o) {
        put32((int) (v >>> 32), out, o);
        return put32((int) v, out, o + 4);
    }

    private static int get32(byte[] in, int o) {
        return ((in[o] & 0xff) << 24) | ((in[o + 1] & 0xff) << 16) | ((in[o + 2] & 0xff) << 8) | (in[o + 3] & 0xff);
    }

    private static long get64(byte[] in, int o) {
        return ((long) get32(in, o) << 32) | (get32(in, o + 4) & 0xffffffffL);
    }

    /** The element whose bytes start at {@code o}. */
    public static SetElement decode(byte[] in, int o) {
        int bits = in[o++];
        int n = in[o++] & 0xff;
        Bytes key = Bytes.wrap(Arrays.copyOfRange(in, o, o + n));
        o += n;
        Bytes keyEnd = null;
        if ((bits & HAS_KEY_END) != 0) {
            n = in[o++] & 0xff;
            keyEnd = Bytes.wrap(Arrays.copyOfRange(in, o, o + n));
            o += n;
        }
        Data data = null;
        if ((bits & HAS_VALUE) != 0) {
            n = in[o++] & 0xff;
            data = Data.value(Bytes.wrap(Arrays.copyOfRange(in, o, o + n)));
            o += n;
        } else if ((bits & HAS_VERDICT) != 0) {
            Verdict.Kind kind = Verdict.Kind.of(get32(in, o));
            n = ((in[o + 4] & 0xff) << 8) | (in[o + 5] & 0xff);
            o += 6;
            String chain = null;
            if (n != NO_CHAIN) {
                chain = new String(in, o, n, StandardCharsets.UTF_8);
                o += n;
            }
            data = chain == null ? constant(kind) : new Verdict(kind, chain);
        }
        long timeout = 0;
        long expires = 0;
        int flags = 0;
        if ((bits & HAS_TIMEOUT) != 0) {
            timeout = get64(in, o);
            o += 8;
        }
        if ((bits & HAS_EXPIRES) != 0) {
            expires = get64(in, o);
            o += 8;
        }
        if ((bits & HAS_FLAGS) != 0) {
            flags = get32(in, o);
            o += 4;
        }
        String comment = null;
        if ((bits & HAS_COMMENT) != 0) {
            n = in[o++] & 0xff;
            comment = new String(in, o, n, StandardCharsets.UTF_8);
        }
        return new SetElement(key, keyEnd, data, timeout, expires, flags, comment);
    }

    /** How many bytes the element starting at {@code o} takes, read from its own bits and lengths. */
    public static int packedLength(byte[] in, int o) {
        int start = o;
        int bits = in[o++];
        o += 1 + (in[o] & 0xff);
        if ((bits & HAS_KEY_END) != 0) {
            o += 1 + (in[o] & 0xff);
        }
        if ((bits & HAS_VALUE) != 0) {
            o += 1 + (in[o] & 0xff);
        } else if ((bits & HAS_VERDICT) != 0) {
            int n = ((in[o + 4] & 0xff) << 8) | (in[o + 5] & 0xff);
            o += 6 + (n == NO_CHAIN ? 0 : n);
        }
        if ((bits & HAS_TIMEOUT) != 0) {
            o += 8;
        }
        if ((bits & HAS_EXPIRES) != 0) {
            o += 8;
        }
        if ((bits & HAS_FLAGS) != 0) {
            o += 4;
        }
        if ((bits & HAS_COMMENT) != 0) {
            o += 1 + (in[o] & 0xff);
        }
        return o - start;
    }

    private static Verdict constant(Verdict.Kind kind) {
        return switch (kind) {
            case ACCEPT -> Verdict.ACCEPT;
            case DROP -> Verdict.DROP;
            case CONTINUE -> Verdict.CONTINUE;
            case RETURN -> Verdict.RETURN;
            default -> new Verdict(kind, null);
        };
    }

    /** The element's key as {@link Bytes#hashCode} hashes it, without decoding the element. */
    public static int keyHash(byte[] in, int o) {
        return Bytes.hash(in, o + KEY_OFFSET, o + KEY_OFFSET + (in[o + 1] & 0xff));
    }

    /** Whether the element at {@code o} has this key. */
    public static boolean keyEquals(byte[] in, int o, Bytes key) {
        int n = in[o + 1] & 0xff;
        return n == key.length() && key.equalsRange(in, o + KEY_OFFSET);
    }

    /** Whether two packed elements have the same key. */
    public static boolean keyEquals(byte[] a, int ao, byte[] b, int bo) {
        int n = a[ao + 1] & 0xff;
        return n == (b[bo + 1] & 0xff)
                && Arrays.equals(a, ao + KEY_OFFSET, ao + KEY_OFFSET + n, b, bo + KEY_OFFSET, bo + KEY_OFFSET + n);
    }

    /** The key of the element at {@code o}. */
    public static Bytes key(byte[] in, int o) {
        int n = in[o + 1] & 0xff;
        return Bytes.wrap(Arrays.copyOfRange(in, o + KEY_OFFSET, o + KEY_OFFSET + n));
    }
}
