package io.nftproxy.netlink.nft.wire;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftTrace;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Verdict;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.msg.Mutations;
import io.nftproxy.netlink.msg.NlMessage;

/** Trace events written as the kernel writes them read back alike; malformed ones are refused with a reason. */
class TraceCodecTest {
    static List<NftTrace> events() {
        Bytes ip = Bytes.fromHex("4500003c1c4640004006b1e60af40264" + "0a60000a");
        Bytes tcp = Bytes.fromHex("d4310050a6f1f4fc00000000a002faf0");
        return List.of(
                new NftTrace(0x8fb6f0a9L, NftTrace.Type.RULE, Family.IP, "nftproxy", "nftrace", 7, Verdict.CONTINUE, -1,
                        3, 1, 0, 0, 0, 2, ip, tcp),
                new NftTrace(0x8fb6f0a9L, NftTrace.Type.RULE, Family.IP, "nftproxy", "services", 12,
                        Verdict.goTo("pick-2"), -1, 0, 0, 0, 0, 0x4000, 2, null, null),
                new NftTrace(0x8fb6f0a9L, NftTrace.Type.RULE, Family.IP, "nftproxy", "pick-2", 0, Verdict.CONTINUE, -1,
                        0, 0, 0, 0, 0, 2, null, null),
                new NftTrace(0x8fb6f0a9L, NftTrace.Type.POLICY, Family.IP6, "nftproxy", "nat-prerouting", 0,
                        Verdict.ACCEPT, 1, 0, 0, 5, 1, 0, 10, null, null));
    }

    private static byte[] message(NftTrace t) {
        MessageWriter w = new MessageWriter(256);
        TraceCodec.encode(w, t, 0);
        ByteBuffer b = w.finish();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    @Test
    void eventsReadBackAsWritten() {
        for (NftTrace t : events()) {
            assertEquals(t, TraceCodec.decode(NlMessage.split(ByteBuffer.wrap(message(t))).get(0)));
        }
    }

    @Test
    void otherMessagesAreNotTraces() {
        MessageWriter w = new MessageWriter(64);
        NftCodec.encode(w, new Op(Op.Verb.ADD, new Table(Family.IP, "t")), () -> 1, 0);
        assertNull(TraceCodec.decode(NlMessage.split(w.finish()).get(0)));
    }

    @Test
    void mutatedEventsAreRefusedWithAReasonOrDecoded() {
        int refused = Mutations.fuzz(events().stream().map(TraceCodecTest::message).toList(), 30_000, m -> {
            NftTrace t = TraceCodec.decode(m);
            if (t != null) {
                t.toString(); // whole enough to print
            }
        });
        assertTrue(refused > 1_000, "the mutations reach the checks: " + refused);
    }
}
