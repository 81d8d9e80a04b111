package io.nftproxy.netlink.nft.wire;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftTrace;
import io.nftproxy.netlink.nft.Verdict;
import static io.nftproxy.netlink.nft.NfTablesUapi.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.msg.Netlink;
import io.nftproxy.netlink.msg.NlMessage;

/**
 * NFT_MSG_TRACE, the kernel's report of a traced packet passing a rule, a chain's return or a
 * base chain's policy (net/netfilter/nf_tables_trace.c). Encoded as the kernel writes it, so that
 * tests can build the messages {@link #decode} reads.
 */
public final class TraceCodec {
    private TraceCodec() {
    }

    public static void encode(MessageWriter w, NftTrace t, int seq) {
        w.beginMessage(NftCodec.type(NFT_MSG_TRACE), 0, seq);
        w.nfgenmsg(t.family().code(), 0);
        w.putBe32(NFTA_TRACE_ID, (int) t.id());
        w.putBe32(NFTA_TRACE_TYPE, t.type().code());
        if (t.table() != null) {
            w.putString(NFTA_TRACE_TABLE, t.table());
        }
        if (t.chain() != null) {
            w.putString(NFTA_TRACE_CHAIN, t.chain());
        }
        if (t.ruleHandle() != 0) {
            w.putBe64(NFTA_TRACE_RULE_HANDLE, t.ruleHandle());
        }
        if (t.verdict() != null) {
            // struct nft_verdict's attributes directly, not wrapped in NFTA_DATA_VERDICT.
            int v = w.beginNested(NFTA_TRACE_VERDICT);
            w.putBe32(NFTA_VERDICT_CODE, t.verdict().kind().code());
            if (t.verdict().chain() != null) {
                w.putString(NFTA_VERDICT_CHAIN, t.verdict().chain());
            }
            w.endNested(v);
        }
        if (t.policy() >= 0) {
            w.putBe32(NFTA_TRACE_POLICY, t.policy());
        }
        if (t.iif() != 0) {
            w.putBe32(NFTA_TRACE_IIF, t.iif());
            w.putBe16(NFTA_TRACE_IIFTYPE, t.iifType());
        }
        if (t.oif() != 0) {
            w.putBe32(NFTA_TRACE_OIF, t.oif());
            w.putBe16(NFTA_TRACE_OIFTYPE, t.oifType());
        }
        if (t.mark() != 0) {
            w.putBe32(NFTA_TRACE_MARK, (int) t.mark());
        }
        w.putBe32(NFTA_TRACE_NFPROTO, t.nfproto());
        if (t.network() != null) {
            w.putBytes(NFTA_TRACE_NETWORK_HEADER, t.network().toArray());
        }
        if (t.transport() != null) {
            w.putBytes(NFTA_TRACE_TRANSPORT_HEADER, t.transport().toArray());
        }
        w.endMessage();
    }

    /** The trace event a message carries, or null when it is not one. */
    public static NftTrace decode(NlMessage m) {
        if (m.nfSubsystem() != Netlink.NFNL_SUBSYS_NFTABLES || m.nfMsgType() != NFT_MSG_TRACE) {
            return null;
        }
        return NftCodec.decoding(m, TraceCodec::decodeTrace);
    }

    private static NftTrace decodeTrace(NlMessage m) {
        Attrs a = m.nfAttrs();
        if (!a.has(NFTA_TRACE_ID) || !a.has(NFTA_TRACE_TYPE)) {
            throw new IllegalArgumentException("a trace event without id or type");
        }
        Attrs v = a.nested(NFTA_TRACE_VERDICT);
        Verdict verdict = null;
        if (v != null) {
            verdict = new Verdict(Verdict.Kind.of(v.be32(NFTA_VERDICT_CODE, 0)), v.string(NFTA_VERDICT_CHAIN));
        }
        byte[] net = a.bytes(NFTA_TRACE_NETWORK_HEADER);
        byte[] transport = a.bytes(NFTA_TRACE_TRANSPORT_HEADER);
        return new NftTrace(a.be32(NFTA_TRACE_ID, 0) & 0xffffffffL, NftTrace.Type.of(a.be32(NFTA_TRACE_TYPE, 0)),
                Family.of(m.nfFamily()), a.string(NFTA_TRACE_TABLE), a.string(NFTA_TRACE_CHAIN),
                a.be64(NFTA_TRACE_RULE_HANDLE, 0), verdict, a.has(NFTA_TRACE_POLICY) ? a.be32(NFTA_TRACE_POLICY, 0) : -1,
                a.be32(NFTA_TRACE_IIF, 0), be16(a, NFTA_TRACE_IIFTYPE), a.be32(NFTA_TRACE_OIF, 0),
                be16(a, NFTA_TRACE_OIFTYPE), a.be32(NFTA_TRACE_MARK, 0) & 0xffffffffL, a.be32(NFTA_TRACE_NFPROTO, 0),
                net == null ? null : Bytes.of(net), transport == null ? null : Bytes.of(transport));
    }

    private static int be16(Attrs a, int type) {
        byte[] b = a.bytes(type);
        if (b == null) {
            return 0;
        }
        if (b.length < 2) {
            throw new IllegalArgumentException("trace attribute " + type + " of " + b.length + " bytes, not 2");
        }
        return ByteBuffer.wrap(b).order(ByteOrder.BIG_ENDIAN).getShort() & 0xffff;
    }
}
