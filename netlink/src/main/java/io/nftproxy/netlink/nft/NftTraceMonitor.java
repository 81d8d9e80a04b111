package io.nftproxy.netlink.nft;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;

import io.nftproxy.ffi.Errno;
import io.nftproxy.ffi.NativeException;
import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.ffi.NetlinkSocket;
import io.nftproxy.netlink.msg.Netlink;
import io.nftproxy.netlink.msg.NlMessage;

/**
 * Subscribes to NFNLGRP_NFTRACE: the kernel's trace events of packets marked with
 * {@code meta nftrace set 1}, as {@code nft monitor trace} shows them.
 */
public final class NftTraceMonitor implements AutoCloseable {
    private final NetlinkSocket socket;
    private final ByteBuffer rx = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.nativeOrder());
    private final Deque<NftTrace> pending = new ArrayDeque<>();
    private Duration currentTimeout;

    private NftTraceMonitor(NetlinkSocket socket) {
        this.socket = socket;
    }

    public static NftTraceMonitor open(NetNamespace ns) throws NftException {
        NetlinkSocket s = null;
        try {
            s = NetlinkSocket.open(NetlinkSocket.NETLINK_NETFILTER, ns);
            s.setBufferSizes(1 << 20, 8 << 20);
            s.joinGroup(Netlink.NFNLGRP_NFTRACE);
            return new NftTraceMonitor(s);
        } catch (NativeException e) {
            if (s != null) {
                s.close();
            }
            throw new NftException("subscribing to nf_tables trace events", e);
        }
    }

    /** The next trace event, waiting up to {@code timeout}; null when none came in time. */
    public NftTrace next(Duration timeout) throws NftException {
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
                        NftTrace t = TraceCodec.decode(m);
                        if (t != null) {
                            pending.add(t);
                        }
                    }
                } catch (IllegalArgumentException e) {
                    throw new NftException("a trace event could not be read: " + e.getMessage(), Errno.EBADMSG, null);
                }
            }
            return pending.poll();
        } catch (NativeException e) {
            if (e.errno() == Errno.ENOBUFS) {
                throw new NftException("trace events were lost (receive buffer overrun)", Errno.ENOBUFS, null);
            }
            throw new NftException("reading trace events", e);
        }
    }

    @Override
    public void close() {
        socket.close();
    }
}
