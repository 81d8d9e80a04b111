package io.nftproxy.netlink.msg;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/** One received netlink message: header fields and the payload after nlmsghdr. */
public record NlMessage(int type, int flags, int seq, int pid, ByteBuffer payload) {

    /** Splits a received datagram into its messages. The payloads share the datagram's memory. */
    public static List<NlMessage> split(ByteBuffer datagram) {
        ByteBuffer b = datagram.duplicate().order(ByteOrder.nativeOrder());
        List<NlMessage> out = new ArrayList<>();
        int pos = b.position();
        int end = b.limit();
        while (pos + Netlink.NLMSG_HDRLEN <= end) {
            int len = b.getInt(pos);
            if (len < Netlink.NLMSG_HDRLEN || pos + len > end) {
                throw new IllegalArgumentException("malformed netlink message at offset " + pos + " (length " + len + ")");
            }
            ByteBuffer payload = b.duplicate();
            payload.position(pos + Netlink.NLMSG_HDRLEN).limit(pos + len);
            out.add(new NlMessage(b.getShort(pos + 4) & 0xffff, b.getShort(pos + 6) & 0xffff,
                    b.getInt(pos + 8), b.getInt(pos + 12), payload.slice().order(ByteOrder.nativeOrder())));
            pos += Netlink.align(len);
        }
        return out;
    }

    /** nfnetlink: the family byte of nfgenmsg. */
    public int nfFamily() {
        needPayload(Netlink.NFGENMSG_LEN, "nfgenmsg");
        return payload.get(0) & 0xff;
    }

    private void needPayload(int bytes, String what) {
        if (payload.limit() < bytes) {
            throw new IllegalArgumentException("netlink message type " + type + " (seq " + seq + ") has " + payload.limit()
                    + " bytes of payload, too short for its " + what);
        }
    }

    /** nfnetlink: the attributes after nfgenmsg. */
    public Attrs nfAttrs() {
        needPayload(Netlink.NFGENMSG_LEN, "nfgenmsg");
        ByteBuffer p = payload.duplicate();
        p.position(Netlink.NFGENMSG_LEN);
        return Attrs.parse(p.slice());
    }

    /** nfnetlink: the subsystem-specific message type (low byte). */
    public int nfMsgType() {
        return type & 0xff;
    }

    public int nfSubsystem() {
        return (type >>> 8) & 0xff;
    }

    public boolean isError() {
        return type == Netlink.NLMSG_ERROR;
    }

    public boolean isDone() {
        return type == Netlink.NLMSG_DONE;
    }

    /** Decodes an NLMSG_ERROR payload (errno 0 is an ack). */
    public NlError error() {
        if (!isError()) {
            throw new IllegalStateException("not an error message");
        }
        needPayload(4 + Netlink.NLMSG_HDRLEN, "struct nlmsgerr");
        int err = -payload.getInt(0);
        // struct nlmsgerr: int error; struct nlmsghdr msg; then (with NLM_F_CAPPED) no payload,
        // then extended-ack TLVs when NLM_F_ACK_TLVS is set.
        int origSeq = payload.getInt(4 + 8);
        int origLen = payload.getInt(4);
        String msg = null;
        int offset = -1;
        if ((flags & Netlink.NLM_F_ACK_TLVS) != 0) {
            int tlvStart = 4 + Netlink.NLMSG_HDRLEN;
            if ((flags & Netlink.NLM_F_CAPPED) == 0) {
                if (origLen < Netlink.NLMSG_HDRLEN || origLen > payload.limit() - 4) {
                    throw new IllegalArgumentException("netlink error message (seq " + seq + ") quotes a message of "
                            + origLen + " bytes in " + (payload.limit() - 4));
                }
                tlvStart = 4 + Netlink.align(origLen);
            }
            if (tlvStart < payload.limit()) {
                ByteBuffer t = payload.duplicate();
                t.position(tlvStart);
                Attrs a = Attrs.parse(t.slice());
                msg = a.string(Netlink.NLMSGERR_ATTR_MSG);
                Attrs.Attr off = a.find(Netlink.NLMSGERR_ATTR_OFFS);
                if (off != null && off.value().remaining() >= 4) {
                    offset = off.value().order(ByteOrder.nativeOrder()).getInt(0);
                }
            }
        }
        return new NlError(err, origSeq, msg, offset);
    }
}
