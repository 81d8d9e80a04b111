package io.nftproxy.netlink.ct;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.Random;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.msg.Mutations;
import io.nftproxy.netlink.msg.NlMessage;

/** A conntrack dump entry, whole and mutated: read, passed over, or refused with a reason; nothing else. */
class ConntrackDecodeFuzzTest {
    static byte[] entry() {
        MessageWriter w = new MessageWriter(512);
        w.beginMessage(ConntrackClient.type(ConntrackClient.IPCTNL_MSG_CT_NEW), 0, 1);
        w.nfgenmsg(ConntrackClient.AF_INET, 0);
        tuple(w, ConntrackClient.CTA_TUPLE_ORIG, new byte[] {10, 0, 0, 1}, new byte[] {10, 96, 0, 10}, 40000, 53);
        tuple(w, ConntrackClient.CTA_TUPLE_REPLY, new byte[] {10, (byte) 244, 1, 5}, new byte[] {10, 0, 0, 1}, 5353, 40000);
        w.endMessage();
        return w.toByteArray();
    }

    private static void tuple(MessageWriter w, int type, byte[] src, byte[] dst, int sport, int dport) {
        int t = w.beginNested(type);
        int ip = w.beginNested(ConntrackClient.CTA_TUPLE_IP);
        w.putBytes(ConntrackClient.CTA_IP_V4_SRC, src);
        w.putBytes(ConntrackClient.CTA_IP_V4_DST, dst);
        w.endNested(ip);
        int proto = w.beginNested(ConntrackClient.CTA_TUPLE_PROTO);
        w.putU8(ConntrackClient.CTA_PROTO_NUM, 17);
        w.putBe16(ConntrackClient.CTA_PROTO_SRC_PORT, sport);
        w.putBe16(ConntrackClient.CTA_PROTO_DST_PORT, dport);
        w.endNested(proto);
        w.endNested(t);
    }

    @Test
    void theEntryReadsAsWritten() throws Exception {
        ConntrackEntry e = ConntrackClient.decode(NlMessage.split(ByteBuffer.wrap(entry())).get(0).nfAttrs());
        assertEquals(17, e.protocol());
        assertEquals(InetAddress.getByName("10.96.0.10"), e.origDst());
        assertEquals(53, e.origDport());
        assertEquals(InetAddress.getByName("10.244.1.5"), e.replySrc());
    }

    @Test
    void mutatedEntriesAreReadPassedOverOrRefused() {
        byte[] seed = entry();
        long s = Long.getLong("fuzz.seed", System.nanoTime());
        Random r = new Random(s);
        int refused = 0;
        int passed = 0;
        for (int round = 0; round < 50_000; round++) {
            byte[] in = Mutations.mutate(seed, r);
            try {
                for (NlMessage m : NlMessage.split(ByteBuffer.wrap(in))) {
                    passed += ConntrackClient.decode(m.nfAttrs()) == null ? 1 : 0;
                }
            } catch (IllegalArgumentException expected) {
                refused++;
            } catch (RuntimeException e) {
                fail("seed " + s + ", round " + round + ": " + e + " decoding " + HexFormat.of().formatHex(in), e);
            }
        }
        assertTrue(refused > 0 && passed > 0, "the mutations reach both outcomes: " + refused + " refused, " + passed + " passed over");
    }
}
