package io.nftproxy.netlink.nft.monitor;

import io.nftproxy.netlink.nft.NftException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.Function;

import io.nftproxy.ffi.Errno;
import io.nftproxy.ffi.NativeException;
import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.ffi.NetlinkSocket;
import io.nftproxy.netlink.msg.NlMessage;

/**
 * Reads what the kernel multicasts to one netfilter group, decoded one message at a time: the
 * part {@link NftMonitor} and {@link NftTraceMonitor} share (the wait with a deadline, the
 * decoding of every message a datagram holds, lost messages and malformed ones as errors).
 */
final class GroupReader<T> implements AutoCloseable {
    private final NetlinkSocket socket;
    private final Function<NlMessage, T> decode;
    /** What is read, for errors: "nf_tables events", "trace events". */
    private final String what;
    /**
     * One datagram: nf_tables coalesces its notifications into buffers of NLMSG_GOODSIZE (a page
     * or two), and a trace event is one packet's headers. A larger buffer would be resident for
     * nothing (a direct buffer is zeroed, so touched, when allocated); one that is too small is an
     * error, never a silent loss ({@code recv} with MSG_TRUNC).
     */
    private final ByteBuffer rx = ByteBuffer.allocateDirect(64 << 10).order(ByteOrder.nativeOrder());
    private final Deque<T> pending = new ArrayDeque<>();
    private Duration currentTimeout;

    private GroupReader(NetlinkSocket socket, Function<NlMessage, T> decode, String what) {
        this.socket = socket;
        this.decode = decode;
        this.what = what;
    }

    /** Joins {@code group} in {@code ns} with a receive buffer of {@code receiveBytes}. */
    static <T> GroupReader<T> open(NetNamespace ns, int group, int receiveBytes, Function<NlMessage, T> decode, String what)
            throws NftException {
        NetlinkSocket s = null;
        try {
            s = NetlinkSocket.open(NetlinkSocket.NETLINK_NETFILTER, ns);
            s.setBufferSizes(1 << 20, receiveBytes);
            s.joinGroup(group);
            return new GroupReader<>(s, decode, what);
        } catch (NativeException e) {
            if (s != null) {
                s.close();
            }
            throw new NftException("subscribing to " + what, e);
        }
    }

    NetlinkSocket socket() {
        return socket;
    }

    /**
     * The next decoded message (those {@code decode} maps to null are passed over), waiting up to
     * {@code timeout}; null when none came in time.
     *
     * @throws NftException with errno ENOBUFS when messages were lost because we read too slowly,
     *                      EBADMSG when one could not be read
     */
    T next(Duration timeout) throws NftException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (pending.isEmpty()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                Duration d = Duration.ofNanos(Math.max(left, 1_000_000));
                if (!d.equals(currentTimeout)) {
                    socket.setReceiveTimeout(d);
                    currentTimeout = d;
                }
                if (!socket.receive(rx, true)) {
                    continue;
                }
                try {
                    for (NlMessage m : NlMessage.split(rx)) {
                        T t = decode.apply(m);
                        if (t != null) {
                            pending.add(t);
                        }
                    }
                } catch (IllegalArgumentException e) {
                    // Whatever it announced is unknown: the reader must treat it as something it missed.
                    throw new NftException("one of the " + what + " could not be read: " + e.getMessage(), Errno.EBADMSG, null);
                }
            }
            return pending.poll();
        } catch (NativeException e) {
            if (e.errno() == Errno.ENOBUFS) {
                throw new NftException(what + " were lost (receive buffer overrun)", Errno.ENOBUFS, null);
            }
            throw new NftException("reading " + what, e);
        }
    }

    @Override
    public void close() {
        socket.close();
    }
}
