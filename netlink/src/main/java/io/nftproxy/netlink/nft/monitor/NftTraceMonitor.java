package io.nftproxy.netlink.nft.monitor;

import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftTrace;
import io.nftproxy.netlink.nft.wire.TraceCodec;
import java.time.Duration;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.msg.Netlink;

/**
 * Subscribes to NFNLGRP_NFTRACE: the kernel's trace events of packets marked with
 * {@code meta nftrace set 1}, as {@code nft monitor trace} shows them.
 */
public final class NftTraceMonitor implements AutoCloseable {
    private final GroupReader<NftTrace> traces;

    private NftTraceMonitor(GroupReader<NftTrace> traces) {
        this.traces = traces;
    }

    public static NftTraceMonitor open(NetNamespace ns) throws NftException {
        return new NftTraceMonitor(GroupReader.open(ns, Netlink.NFNLGRP_NFTRACE, 8 << 20, TraceCodec::decode, "trace events"));
    }

    /**
     * The next trace event, waiting up to {@code timeout}; null when none came in time.
     *
     * @throws NftException with errno ENOBUFS when events were lost because we read too slowly
     */
    public NftTrace next(Duration timeout) throws NftException {
        return traces.next(timeout);
    }

    @Override
    public void close() {
        traces.close();
    }
}
