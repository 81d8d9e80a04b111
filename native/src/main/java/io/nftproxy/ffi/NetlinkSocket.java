package io.nftproxy.ffi;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import jnr.ffi.byref.IntByReference;

/**
 * A raw netlink socket bound to a kernel-assigned port id. Not thread-safe: one owner sends and
 * receives. Buffers handed to {@link #send} and {@link #receive} must be direct; data starts at
 * index 0.
 */
public final class NetlinkSocket implements AutoCloseable {
    public static final int NETLINK_ROUTE = 0;
    public static final int NETLINK_NETFILTER = 12;

    private static final int AF_NETLINK = 16;
    private static final int SOCK_RAW = 3;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final int SOL_SOCKET = 1;
    private static final int SO_SNDBUF = 7;
    private static final int SO_RCVBUF = 8;
    private static final int SO_RCVTIMEO = 20;
    private static final int SO_SNDBUFFORCE = 32;
    private static final int SO_RCVBUFFORCE = 33;
    private static final int SOL_NETLINK = 270;
    private static final int NETLINK_ADD_MEMBERSHIP = 1;
    private static final int NETLINK_DROP_MEMBERSHIP = 2;
    private static final int NETLINK_CAP_ACK = 10;
    private static final int NETLINK_EXT_ACK = 11;
    private static final int MSG_TRUNC = 0x20;
    private static final int MSG_DONTWAIT = 0x40;
    private static final int SOCKADDR_NL_LEN = 12;

    private final LibC c = Native.libc();
    private final int protocol;
    private final ByteBuffer kernelAddr;
    private final AtomicInteger seq = new AtomicInteger((int) (System.nanoTime() & 0x3fffffff));
    private int fd;
    private int portId;

    private NetlinkSocket(int fd, int protocol) {
        this.fd = fd;
        this.protocol = protocol;
        this.kernelAddr = sockaddrNl(0, 0);
    }

    /** Opens a socket in the caller's network namespace. */
    public static NetlinkSocket open(int protocol) throws NativeException {
        LibC c = Native.libc();
        int fd = c.socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
        if (fd < 0) {
            throw new NativeException("socket(AF_NETLINK, " + protocol + ")", Native.errno());
        }
        NetlinkSocket s = new NetlinkSocket(fd, protocol);
        try {
            s.bindAndConfigure();
            return s;
        } catch (NativeException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /** Opens a socket inside {@code ns}; the socket stays there whichever thread uses it. */
    public static NetlinkSocket open(int protocol, NetNamespace ns) throws NativeException {
        if (ns == null) {
            return open(protocol);
        }
        return ns.call(() -> open(protocol));
    }

    private void bindAndConfigure() throws NativeException {
        if (c.bind(fd, sockaddrNl(0, 0), SOCKADDR_NL_LEN) < 0) {
            throw new NativeException("bind(AF_NETLINK)", Native.errno());
        }
        ByteBuffer addr = ByteBuffer.allocateDirect(SOCKADDR_NL_LEN).order(ByteOrder.nativeOrder());
        IntByReference len = new IntByReference(SOCKADDR_NL_LEN);
        if (c.getsockname(fd, addr, len) < 0) {
            throw new NativeException("getsockname", Native.errno());
        }
        portId = addr.getInt(4);
        // Errors come back without the original message (we keep our own copy) but with the
        // kernel's text and the offset of the offending attribute.
        setInt(SOL_NETLINK, NETLINK_CAP_ACK, 1, "NETLINK_CAP_ACK");
        setInt(SOL_NETLINK, NETLINK_EXT_ACK, 1, "NETLINK_EXT_ACK");
    }

    private static ByteBuffer sockaddrNl(int pid, int groups) {
        ByteBuffer b = ByteBuffer.allocateDirect(SOCKADDR_NL_LEN).order(ByteOrder.nativeOrder());
        b.putShort(0, (short) AF_NETLINK);
        b.putInt(4, pid);
        b.putInt(8, groups);
        return b;
    }

    private void setInt(int level, int opt, int value, String name) throws NativeException {
        ByteBuffer v = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder());
        v.putInt(0, value);
        if (c.setsockopt(fd, level, opt, v, 4) < 0) {
            throw new NativeException("setsockopt(" + name + ")", Native.errno());
        }
    }

    /**
     * Sizes the socket buffers. The FORCE variants ignore net.core.[rw]mem_max (needed for batches
     * of hundreds of MB); without CAP_NET_ADMIN we fall back to the capped ones.
     */
    public void setBufferSizes(int sendBytes, int receiveBytes) throws NativeException {
        forceSize(SO_SNDBUFFORCE, SO_SNDBUF, sendBytes, "SO_SNDBUF");
        forceSize(SO_RCVBUFFORCE, SO_RCVBUF, receiveBytes, "SO_RCVBUF");
    }

    private void forceSize(int force, int plain, int bytes, String name) throws NativeException {
        try {
            setInt(SOL_SOCKET, force, bytes, name + "FORCE");
        } catch (NativeException e) {
            if (e.errno() != Errno.EPERM) {
                throw e;
            }
            setInt(SOL_SOCKET, plain, bytes, name);
        }
    }

    public void setReceiveTimeout(Duration timeout) throws NativeException {
        ByteBuffer tv = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
        tv.putLong(0, timeout.getSeconds());
        tv.putLong(8, timeout.getNano() / 1000L);
        if (c.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, tv, 16) < 0) {
            throw new NativeException("setsockopt(SO_RCVTIMEO)", Native.errno());
        }
    }

    public void joinGroup(int group) throws NativeException {
        setInt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, group, "NETLINK_ADD_MEMBERSHIP");
    }

    public void leaveGroup(int group) throws NativeException {
        setInt(SOL_NETLINK, NETLINK_DROP_MEMBERSHIP, group, "NETLINK_DROP_MEMBERSHIP");
    }

    public int protocol() {
        return protocol;
    }

    /** The port id the kernel assigned at bind. */
    public int portId() {
        return portId;
    }

    public int nextSequence() {
        return seq.incrementAndGet();
    }

    /** Moves the sequence counter past {@code last}, after a batch numbered its messages itself. */
    public void skipSequencesTo(int last) {
        seq.accumulateAndGet(last, Math::max);
    }

    /** Sends bytes [0, limit) of a direct buffer to the kernel as one datagram. */
    public void send(ByteBuffer buf) throws NativeException {
        requireDirect(buf);
        ensureOpen();
        int len = buf.limit();
        while (true) {
            long n = c.sendto(fd, buf, len, 0, kernelAddr, SOCKADDR_NL_LEN);
            if (n >= 0) {
                if (n != len) {
                    throw new NativeException("sendto: short write " + n + " of " + len, Errno.EMSGSIZE);
                }
                return;
            }
            int err = Native.errno();
            if (err != Errno.EINTR) {
                throw new NativeException("sendto(" + len + " bytes)", err);
            }
        }
    }

    /**
     * Receives one datagram into {@code buf} (from index 0) and sets its limit to the datagram's
     * length. Returns false when {@code wait} is false and nothing is queued, or when the receive
     * timeout expires. A datagram larger than the buffer is an error, never silently cut.
     */
    public boolean receive(ByteBuffer buf, boolean wait) throws NativeException {
        requireDirect(buf);
        ensureOpen();
        int flags = MSG_TRUNC | (wait ? 0 : MSG_DONTWAIT);
        while (true) {
            long n = c.recv(fd, buf, buf.capacity(), flags);
            if (n >= 0) {
                if (n > buf.capacity()) {
                    throw new NativeException("recv: datagram of " + n + " bytes exceeds buffer of "
                            + buf.capacity(), Errno.EMSGSIZE);
                }
                buf.position(0).limit((int) n);
                return true;
            }
            int err = Native.errno();
            if (err == Errno.EINTR) {
                continue;
            }
            if (err == Errno.EAGAIN) {
                return false;
            }
            throw new NativeException("recv", err);
        }
    }

    private static void requireDirect(ByteBuffer buf) {
        if (!buf.isDirect()) {
            throw new IllegalArgumentException("netlink I/O needs a direct buffer");
        }
    }

    private void ensureOpen() throws NativeException {
        if (fd < 0) {
            throw new NativeException("netlink socket is closed", Errno.EBADF);
        }
    }

    public boolean isOpen() {
        return fd >= 0;
    }

    @Override
    public void close() {
        if (fd >= 0) {
            c.close(fd);
            fd = -1;
        }
    }
}
