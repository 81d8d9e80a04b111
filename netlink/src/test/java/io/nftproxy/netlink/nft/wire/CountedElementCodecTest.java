package io.nftproxy.netlink.nft.wire;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.CountedElement;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.print.NftPrinter;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.msg.Mutations;
import io.nftproxy.netlink.msg.NlMessage;

/** Sets with a counter and the counted elements a dump returns: written and read back alike, malformed ones refused. */
class CountedElementCodecTest {
    private static final NftSet MAP = NftSet.map(Family.IP, "t", "m", DataType.VERDICT, DataType.IPV4_ADDR,
            DataType.INET_PROTO, DataType.INET_SERVICE).withCounter(true).withComment("counted");

    private static List<CountedElement> elements() {
        return List.of(
                new CountedElement(Bytes.concat(Bytes.ip("10.96.0.1"), Bytes.u8(6).padTo4(), Bytes.be16(80).padTo4()),
                        Verdict.goTo("pick-2"), 12, 720),
                new CountedElement(Bytes.concat(Bytes.ip("10.96.0.2"), Bytes.u8(17).padTo4(), Bytes.be16(53).padTo4()),
                        Verdict.goTo("pick-1"), 0, 0));
    }

    private static byte[] countedMessage() {
        MessageWriter w = new MessageWriter(256);
        NftCodec.encodeCountedElements(w, Family.IP, "t", "m", elements(), 7);
        ByteBuffer b = w.finish();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    @Test
    void aSetWithACounterReadsBackWithIt() {
        MessageWriter w = new MessageWriter(256);
        NftCodec.encode(w, new Op(Op.Verb.ADD, MAP), () -> 1, 0);
        NftSet back = NftCodec.decodeSet(NlMessage.split(w.finish()).get(0));
        assertEquals(MAP, back);
        assertTrue(back.counter());
        assertFalse(MAP.withCounter(false).counter());
        assertTrue(NftPrinter.setSpec(MAP).contains("counter"), NftPrinter.setSpec(MAP).toString());
    }

    @Test
    void countedElementsReadBackAsWritten() {
        List<NlMessage> ms = NlMessage.split(ByteBuffer.wrap(countedMessage()));
        assertEquals(1, ms.size());
        assertEquals(elements(), NftCodec.decodeCountedElements(ms.get(0)));
        // The same message read as plain elements: the counts do not make them differ from what was written.
        assertEquals(List.of(SetElement.of(elements().get(0).key(), elements().get(0).data()),
                SetElement.of(elements().get(1).key(), elements().get(1).data())),
                NftCodec.decodeElements(ms.get(0)).elements());
    }

    @Test
    void mutatedCountedElementsAreRefusedWithAReasonOrDecoded() {
        int refused = Mutations.fuzz(List.of(countedMessage()), 20_000, m -> NftCodec.decoding(m, NftCodec::decodeCountedElements));
        assertTrue(refused > 1_000, "the mutations reach the checks: " + refused);
    }
}
