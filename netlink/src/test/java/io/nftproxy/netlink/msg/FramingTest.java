package io.nftproxy.netlink.msg;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

class FramingTest {
    @Test
    void messagesAndAttributesArePaddedAndNested() {
        MessageWriter w = new MessageWriter(8);
        w.beginMessage(0x0a03, Netlink.NLM_F_REQUEST | Netlink.NLM_F_ACK, 42);
        w.nfgenmsg(2, 0x0a);
        w.putString(1, "abc");          // 4 + 4 bytes
        int nest = w.beginNested(4);
        w.putBe32(1, 0x01020304);
        w.putU8(2, 7);                  // 5 bytes padded to 8
        w.endNested(nest);
        w.endMessage();
        byte[] b = w.toByteArray();
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.nativeOrder());
        assertEquals(b.length, bb.getInt(0), "nlmsg_len covers the whole message");
        assertEquals(16 + 4 + 8 + 4 + 8 + 8, b.length);
        assertEquals(0, b.length % 4);
        assertEquals((short) 0x0a03, bb.getShort(4));
        assertEquals(42, bb.getInt(8));
        // nfgenmsg: family, version, big-endian resource id
        assertArrayEquals(new byte[] {2, 0, 0, 0x0a}, Arrays.copyOfRange(b, 16, 20));

        List<NlMessage> msgs = NlMessage.split(ByteBuffer.wrap(b));
        assertEquals(1, msgs.size());
        NlMessage m = msgs.get(0);
        assertEquals(42, m.seq());
        assertEquals(2, m.nfFamily());
        Attrs a = m.nfAttrs();
        assertEquals("abc", a.string(1));
        Attrs n = a.nested(4);
        assertEquals(0x01020304, n.be32(1, 0));
        assertEquals(7, n.u8(2, 0));
    }

    @Test
    void bufferGrowsAcrossMessages() {
        MessageWriter w = new MessageWriter(64);
        for (int i = 0; i < 10_000; i++) {
            w.beginMessage(1, 0, i);
            w.putBe64(3, i);
            w.endMessage();
        }
        List<NlMessage> msgs = NlMessage.split(w.finish());
        assertEquals(10_000, msgs.size());
        assertEquals(9_999, msgs.get(9_999).seq());
        assertEquals(9_999L, msgs.get(9_999).payload().duplicate().position(0).slice()
                .order(ByteOrder.BIG_ENDIAN).getLong(4));
    }

    @Test
    void malformedInputIsRejectedNotMisread() {
        ByteBuffer bad = ByteBuffer.allocate(20).order(ByteOrder.nativeOrder());
        bad.putInt(0, 400); // claims more than there is
        assertThrows(IllegalArgumentException.class, () -> NlMessage.split(bad));
        ByteBuffer attr = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
        attr.putShort(0, (short) 2); // shorter than its own header
        assertThrows(IllegalArgumentException.class, () -> Attrs.parse(attr));
        assertThrows(IllegalArgumentException.class, () -> new MessageWriter(8).putBytes(1, new byte[70_000]));
    }

    @Test
    void extendedAckIsDecoded() {
        // An NLMSG_ERROR as the kernel sends it with NETLINK_CAP_ACK and NETLINK_EXT_ACK.
        MessageWriter w = new MessageWriter(64);
        w.beginMessage(Netlink.NLMSG_ERROR, Netlink.NLM_F_CAPPED | Netlink.NLM_F_ACK_TLVS, 7);
        ByteBuffer err = ByteBuffer.allocate(20).order(ByteOrder.nativeOrder());
        err.putInt(0, -2);       // -ENOENT
        err.putInt(4, 64);       // original nlmsg_len
        err.putInt(12, 1234);    // original sequence
        w.putRaw(err.array());
        w.putString(Netlink.NLMSGERR_ATTR_MSG, "chain not found");
        w.putBytes(Netlink.NLMSGERR_ATTR_OFFS, ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(0, 36).array());
        w.endMessage();
        NlError e = NlMessage.split(w.finish()).get(0).error();
        assertEquals(2, e.errno());
        assertEquals(1234, e.seq());
        assertEquals("chain not found", e.extAckMessage());
        assertEquals(36, e.attributeOffset());
    }
}
