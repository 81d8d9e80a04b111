package io.nftproxy.netlink.ct;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import io.nftproxy.ffi.Errno;
import io.nftproxy.ffi.NativeException;
import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.ffi.NetlinkSocket;
import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.DumpReader;
import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.msg.Netlink;
import io.nftproxy.netlink.msg.NlError;
import io.nftproxy.netlink.msg.NlMessage;
import io.nftproxy.netlink.nft.NftException;

/**
 * ctnetlink: lists the connection tracking table and deletes entries, as {@code conntrack -L}
 * and {@code conntrack -D} do. The proxy uses it to forget UDP flows to endpoints that are gone,
 * which would otherwise keep being DNATed to them.
 */
public final class ConntrackClient implements AutoCloseable {
    static final int NFNL_SUBSYS_CTNETLINK = 1;
    static final int IPCTNL_MSG_CT_NEW = 0;
    static final int IPCTNL_MSG_CT_GET = 1;
    static final int IPCTNL_MSG_CT_DELETE = 2;
    static final int CTA_TUPLE_ORIG = 1;
    static final int CTA_TUPLE_REPLY = 2;
    static final int CTA_TUPLE_IP = 1;
    static final int CTA_TUPLE_PROTO = 2;
    static final int CTA_IP_V4_SRC = 1;
    static final int CTA_IP_V4_DST = 2;
    static final int CTA_IP_V6_SRC = 3;
    static final int CTA_IP_V6_DST = 4;
    static final int CTA_PROTO_NUM = 1;
    static final int CTA_PROTO_SRC_PORT = 2;
    static final int CTA_PROTO_DST_PORT = 3;
    static final int AF_INET = 2;
    static final int AF_INET6 = 10;

    private final NetlinkSocket socket;
    private final MessageWriter writer = new MessageWriter(4096);
    /**
     * One datagram: the kernel fills a dump's buffers to at most 32 KiB (af_netlink's
     * max_recvmsg_len), and our requests' answers are acknowledgements. Larger would be resident
     * for nothing; too small is an error, never a silent loss ({@code recv} with MSG_TRUNC).
     */
    private final ByteBuffer rx = ByteBuffer.allocateDirect(64 << 10).order(ByteOrder.nativeOrder());

    private ConntrackClient(NetlinkSocket socket) {
        this.socket = socket;
    }

    public static ConntrackClient open(NetNamespace ns) throws NftException {
        NetlinkSocket s = null;
        try {
            s = NetlinkSocket.open(NetlinkSocket.NETLINK_NETFILTER, ns);
            s.setReceiveTimeout(Duration.ofSeconds(30));
            s.setBufferSizes(1 << 20, 8 << 20);
            return new ConntrackClient(s);
        } catch (NativeException e) {
            if (s != null) {
                s.close();
            }
            throw new NftException("opening ctnetlink" + (ns == null ? "" : " in " + ns), e);
        }
    }

    static int type(int msg) {
        return (NFNL_SUBSYS_CTNETLINK << 8) | msg;
    }

    /** Every tracked connection of one address family (4 or 6). */
    public List<ConntrackEntry> list(int ipVersion) throws NftException {
        List<ConntrackEntry> out = new ArrayList<>();
        try {
            int seq = socket.nextSequence();
            writer.reset();
            writer.beginMessage(type(IPCTNL_MSG_CT_GET), Netlink.NLM_F_REQUEST | Netlink.NLM_F_DUMP, seq);
            writer.nfgenmsg(ipVersion == 4 ? AF_INET : AF_INET6, 0);
            writer.endMessage();
            socket.send(writer.finish());
            DumpReader.End end = DumpReader.read(socket, rx, seq, m -> {
                ConntrackEntry entry = decode(m.nfAttrs());
                if (entry != null) {
                    out.add(entry);
                }
            });
            if (end.timedOut()) {
                throw new NftException("listing conntrack: no reply", Errno.EAGAIN, null);
            }
            if (end.error() != null) {
                throw new NftException("listing conntrack", end.error().errno(), end.error().extAckMessage());
            }
            return out;
        } catch (NativeException e) {
            throw new NftException("listing conntrack", e);
        }
    }

    /**
     * One entry of a dump, or null when it lacks what the proxy acts on (both tuples with their
     * addresses and protocol): such an entry cannot be one of ours to delete, so it is passed over.
     */
    static ConntrackEntry decode(Attrs a) {
        Attrs orig = a.nested(CTA_TUPLE_ORIG);
        Attrs reply = a.nested(CTA_TUPLE_REPLY);
        if (orig == null || reply == null) {
            return null;
        }
        Attrs oip = orig.nested(CTA_TUPLE_IP);
        Attrs rip = reply.nested(CTA_TUPLE_IP);
        Attrs oproto = orig.nested(CTA_TUPLE_PROTO);
        Attrs rproto = reply.nested(CTA_TUPLE_PROTO);
        if (oip == null || rip == null || oproto == null || rproto == null) {
            return null;
        }
        boolean v6 = oip.has(CTA_IP_V6_SRC);
        InetAddress os = ip(oip.bytes(v6 ? CTA_IP_V6_SRC : CTA_IP_V4_SRC));
        InetAddress od = ip(oip.bytes(v6 ? CTA_IP_V6_DST : CTA_IP_V4_DST));
        InetAddress rs = ip(rip.bytes(v6 ? CTA_IP_V6_SRC : CTA_IP_V4_SRC));
        InetAddress rd = ip(rip.bytes(v6 ? CTA_IP_V6_DST : CTA_IP_V4_DST));
        if (os == null || od == null || rs == null || rd == null) {
            return null;
        }
        return new ConntrackEntry(oproto.u8(CTA_PROTO_NUM, 0), os, od, port(oproto, CTA_PROTO_SRC_PORT),
                port(oproto, CTA_PROTO_DST_PORT), rs, rd, port(rproto, CTA_PROTO_SRC_PORT), port(rproto, CTA_PROTO_DST_PORT));
    }

    private static int port(Attrs a, int type) {
        byte[] b = a.bytes(type);
        return b == null || b.length < 2 ? 0 : ((b[0] & 0xff) << 8) | (b[1] & 0xff);
    }

    /** An address of 4 or 16 bytes; null for anything else. */
    private static InetAddress ip(byte[] b) {
        if (b == null || (b.length != 4 && b.length != 16)) {
            return null;
        }
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            return null;
        }
    }

    /** Deletes the entry with this original tuple; false when it was already gone. */
    public boolean delete(ConntrackEntry e) throws NftException {
        boolean v6 = !(e.origSrc() instanceof Inet4Address);
        try {
            int seq = socket.nextSequence();
            writer.reset();
            writer.beginMessage(type(IPCTNL_MSG_CT_DELETE), Netlink.NLM_F_REQUEST | Netlink.NLM_F_ACK, seq);
            writer.nfgenmsg(v6 ? AF_INET6 : AF_INET, 0);
            int tuple = writer.beginNested(CTA_TUPLE_ORIG);
            int ip = writer.beginNested(CTA_TUPLE_IP);
            writer.putBytes(v6 ? CTA_IP_V6_SRC : CTA_IP_V4_SRC, e.origSrc().getAddress());
            writer.putBytes(v6 ? CTA_IP_V6_DST : CTA_IP_V4_DST, e.origDst().getAddress());
            writer.endNested(ip);
            int proto = writer.beginNested(CTA_TUPLE_PROTO);
            writer.putU8(CTA_PROTO_NUM, e.protocol());
            writer.putBe16(CTA_PROTO_SRC_PORT, e.origSport());
            writer.putBe16(CTA_PROTO_DST_PORT, e.origDport());
            writer.endNested(proto);
            writer.endNested(tuple);
            writer.endMessage();
            socket.send(writer.finish());
            while (true) {
                if (!socket.receive(rx, true)) {
                    throw new NftException("deleting conntrack entry: no reply", Errno.EAGAIN, null);
                }
                for (NlMessage m : NlMessage.split(rx)) {
                    if (m.seq() == seq && m.isError()) {
                        NlError err = m.error();
                        if (err.isAck()) {
                            return true;
                        }
                        if (err.errno() == Errno.ENOENT) {
                            return false;
                        }
                        throw new NftException("deleting conntrack entry " + e, err.errno(), err.extAckMessage());
                    }
                }
            }
        } catch (NativeException ex) {
            throw new NftException("deleting conntrack entry " + e, ex);
        }
    }

    /** Deletes every entry of the family that matches; returns how many went. */
    public int deleteWhere(int ipVersion, Predicate<ConntrackEntry> which) throws NftException {
        int n = 0;
        for (ConntrackEntry e : list(ipVersion)) {
            if (which.test(e) && delete(e)) {
                n++;
            }
        }
        return n;
    }

    @Override
    public void close() {
        socket.close();
    }
}
