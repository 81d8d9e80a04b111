package io.nftproxy.netlink.msg;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Appends netlink messages and attributes to one growing direct buffer, ready to hand to the
 * socket without a copy. Integers in attributes are big-endian, as nf_tables wants them; headers
 * are in host order.
 */
public final class MessageWriter {
    private ByteBuffer buf;
    private int messageStart = -1;

    public MessageWriter(int initialCapacity) {
        buf = ByteBuffer.allocateDirect(Math.max(64, initialCapacity)).order(ByteOrder.nativeOrder());
    }

    private void ensure(int more) {
        if (buf.position() + more <= buf.capacity()) {
            return;
        }
        long want = Math.max((long) buf.capacity() * 2, (long) buf.position() + more);
        if (want > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("netlink batch exceeds 2 GiB");
        }
        ByteBuffer bigger = ByteBuffer.allocateDirect((int) want).order(ByteOrder.nativeOrder());
        buf.flip();
        bigger.put(buf);
        buf = bigger;
    }

    private void pad() {
        int p = buf.position();
        int aligned = Netlink.align(p);
        ensure(aligned - p);
        while (buf.position() < aligned) {
            buf.put((byte) 0);
        }
    }

    /** Starts a message; {@link #endMessage} fills in its length. Returns its offset. */
    public int beginMessage(int type, int flags, int seq) {
        if (messageStart >= 0) {
            throw new IllegalStateException("message already open");
        }
        pad();
        ensure(Netlink.NLMSG_HDRLEN);
        messageStart = buf.position();
        buf.putInt(0);
        buf.putShort((short) type);
        buf.putShort((short) flags);
        buf.putInt(seq);
        buf.putInt(0);
        return messageStart;
    }

    /** The nfnetlink header that follows nlmsghdr in every nfnetlink message. */
    public void nfgenmsg(int family, int resId) {
        ensure(Netlink.NFGENMSG_LEN);
        buf.put((byte) family);
        buf.put((byte) Netlink.NFNETLINK_V0);
        buf.order(ByteOrder.BIG_ENDIAN).putShort((short) resId).order(ByteOrder.nativeOrder());
    }

    public void endMessage() {
        if (messageStart < 0) {
            throw new IllegalStateException("no message open");
        }
        pad();
        buf.putInt(messageStart, buf.position() - messageStart);
        messageStart = -1;
    }

    public void putBytes(int type, byte[] value) {
        int len = Netlink.NLA_HDRLEN + value.length;
        if (len > 0xffff) {
            throw new IllegalArgumentException("attribute " + type + " of " + value.length + " bytes exceeds 64 KiB");
        }
        ensure(Netlink.align(len));
        buf.putShort((short) len);
        buf.putShort((short) type);
        buf.put(value);
        pad();
    }

    /** Raw bytes inside the open message (fixed headers such as struct nlmsgerr), then padding. */
    public void putRaw(byte[] bytes) {
        ensure(Netlink.align(bytes.length));
        buf.put(bytes);
        pad();
    }

    /** A NUL-terminated string, as the kernel's NLA_STRING / NLA_NUL_STRING policies accept. */
    public void putString(int type, String value) {
        byte[] s = value.getBytes(StandardCharsets.UTF_8);
        byte[] z = new byte[s.length + 1];
        System.arraycopy(s, 0, z, 0, s.length);
        putBytes(type, z);
    }

    public void putU8(int type, int value) {
        putBytes(type, new byte[] {(byte) value});
    }

    public void putBe16(int type, int value) {
        putBytes(type, new byte[] {(byte) (value >>> 8), (byte) value});
    }

    public void putBe32(int type, int value) {
        ensure(8);
        buf.putShort((short) 8);
        buf.putShort((short) type);
        buf.order(ByteOrder.BIG_ENDIAN).putInt(value).order(ByteOrder.nativeOrder());
    }

    public void putBe64(int type, long value) {
        ensure(12);
        buf.putShort((short) 12);
        buf.putShort((short) type);
        buf.order(ByteOrder.BIG_ENDIAN).putLong(value).order(ByteOrder.nativeOrder());
    }

    /** Opens a nested attribute (with NLA_F_NESTED, as libmnl sets it); returns a token for {@link #endNested}. */
    public int beginNested(int type) {
        pad();
        ensure(Netlink.NLA_HDRLEN);
        int start = buf.position();
        buf.putShort((short) 0);
        buf.putShort((short) (type | Netlink.NLA_F_NESTED));
        return start;
    }

    public void endNested(int start) {
        int len = buf.position() - start;
        if (len > 0xffff) {
            throw new IllegalArgumentException("nested attribute of " + len + " bytes exceeds 64 KiB");
        }
        buf.putShort(start, (short) len);
    }

    /** Bytes written so far. */
    public int size() {
        return buf.position();
    }

    /** Bytes written since the given offset (to measure the open message or attribute). */
    public int sizeSince(int offset) {
        return buf.position() - offset;
    }

    /** A view of everything written, positioned at 0: hand it to the socket. */
    public ByteBuffer finish() {
        if (messageStart >= 0) {
            throw new IllegalStateException("message still open");
        }
        ByteBuffer view = buf.duplicate().order(ByteOrder.nativeOrder());
        view.flip();
        return view;
    }

    public void reset() {
        buf.clear();
        messageStart = -1;
    }

    /** A copy of everything written (tests compare encodings byte for byte). */
    public byte[] toByteArray() {
        ByteBuffer v = finish();
        byte[] out = new byte[v.remaining()];
        v.get(out);
        return out;
    }
}
