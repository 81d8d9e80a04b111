package io.nftproxy.netlink.nft.wire;

import io.nftproxy.netlink.nft.Fixture;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.NftEvent;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.monitor.NftMonitor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.msg.Mutations;
import io.nftproxy.netlink.msg.NlMessage;

/**
 * Bytes from the kernel are input like any other: a message that is cut short, has a wrong
 * length, a missing or misplaced attribute must be refused with an {@link IllegalArgumentException}
 * that says what is wrong (the monitor turns it into an error its reader handles), never with an
 * index, buffer, null or class-cast exception from deep inside, and never hang. Seeded mutations of
 * every message the fixture's transaction encodes (every object type, every expression), the seed
 * printed on failure.
 */
class DecoderFuzzTest {
    private static final int ROUNDS = 150_000;

    /** Every message the fixture writes, one array each. */
    static List<byte[]> seeds() {
        MessageWriter w = new MessageWriter(1 << 16);
        int[] seq = {1};
        for (Op op : new Fixture().transaction().ops()) {
            NftCodec.encode(w, op, () -> seq[0]++, 0);
        }
        ByteBuffer all = w.finish();
        List<byte[]> out = new ArrayList<>();
        for (NlMessage m : NlMessage.split(all)) {
            byte[] b = new byte[16 + m.payload().remaining()];
            ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.nativeOrder());
            bb.putInt(b.length).putShort((short) m.type()).putShort((short) m.flags()).putInt(m.seq()).putInt(m.pid());
            bb.put(m.payload().duplicate());
            out.add(b);
        }
        return out;
    }

    @Test
    void theSeedsThemselvesDecode() {
        List<byte[]> seeds = seeds();
        assertTrue(seeds.size() > 40, "the fixture writes every kind of message: " + seeds.size());
        int decoded = 0;
        for (byte[] s : seeds) {
            for (NlMessage m : NlMessage.split(ByteBuffer.wrap(s))) {
                decoded += NftMonitor.decode(m) != null ? 1 : 0;
            }
        }
        assertEquals(seeds.size(), decoded, "every unmutated message decodes");
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void mutatedMessagesAreRefusedWithAReasonOrDecoded() {
        List<byte[]> seeds = seeds();
        long seed = Long.getLong("fuzz.seed", System.nanoTime());
        Random r = new Random(seed);
        int refused = 0;
        for (int round = 0; round < ROUNDS; round++) {
            byte[] in = Mutations.mutate(seeds.get(r.nextInt(seeds.size())), r);
            try {
                for (NlMessage m : NlMessage.split(ByteBuffer.wrap(in))) {
                    NftEvent e = NftMonitor.decode(m);
                    if (e != null && e.object() != null) {
                        e.toString(); // the decoded object is whole enough to print
                    }
                    if (m.isError()) {
                        m.error();
                    }
                }
            } catch (IllegalArgumentException expected) {
                refused++;
                if (expected.getMessage() == null || expected.getMessage().isBlank()) {
                    fail("refused without a reason (seed " + seed + ", round " + round + "): " + HexFormat.of().formatHex(in),
                            expected);
                }
            } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
                fail("seed " + seed + ", round " + round + ": " + e + " decoding " + HexFormat.of().formatHex(in), e);
            }
        }
        assertTrue(refused > ROUNDS / 20, "the mutations reach the checks: " + refused + " refused");
    }
}
