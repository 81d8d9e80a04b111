package io.nftproxy.netlink.msg;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

/** Corruptions of one netlink message (a 16-byte header, then the payload), for the decoders' fuzz tests. */
public final class Mutations {
    private Mutations() {
    }

    /** Decodes what one (possibly corrupted) message holds; a refusal is an IllegalArgumentException. */
    @FunctionalInterface
    public interface Decoder {
        void decode(NlMessage m);
    }

    /**
     * {@code rounds} seeded mutations of the seeds, each decoded: every one must decode or be
     * refused with a reason, never fail any other way. The seed (-Dfuzz.seed) is in every failure.
     * Returns how many were refused.
     */
    public static int fuzz(List<byte[]> seeds, int rounds, Decoder decoder) {
        long s = Long.getLong("fuzz.seed", System.nanoTime());
        Random r = new Random(s);
        int refused = 0;
        for (int round = 0; round < rounds; round++) {
            byte[] in = mutate(seeds.get(r.nextInt(seeds.size())), r);
            try {
                for (NlMessage m : NlMessage.split(ByteBuffer.wrap(in))) {
                    decoder.decode(m);
                }
            } catch (IllegalArgumentException expected) {
                refused++;
                if (expected.getMessage() == null || expected.getMessage().isBlank()) {
                    throw new AssertionError("refused without a reason (seed " + s + ", round " + round + "): "
                            + HexFormat.of().formatHex(in), expected);
                }
            } catch (RuntimeException | StackOverflowError e) {
                throw new AssertionError("seed " + s + ", round " + round + ": " + e + " decoding " + HexFormat.of().formatHex(in), e);
            }
        }
        return refused;
    }

    /** One to three changes of the kinds that corrupt messages: bytes, lengths, truncation, insertion. */
    public static byte[] mutate(byte[] seed, Random r) {
        byte[] b = seed.clone();
        int changes = 1 + r.nextInt(3);
        for (int c = 0; c < changes && b.length > 0; c++) {
            switch (r.nextInt(6)) {
                case 0 -> b[r.nextInt(b.length)] ^= (byte) (1 << r.nextInt(8));
                case 1 -> b[r.nextInt(b.length)] = (byte) r.nextInt(256);
                case 2 -> { // an attribute length or type: 16 bits at an aligned offset after the header
                    if (b.length >= 22) {
                        int at = 16 + 4 * r.nextInt((b.length - 18) / 4);
                        int v = r.nextBoolean() ? r.nextInt(16) : r.nextInt(65536);
                        b[at] = (byte) v;
                        b[at + 1] = (byte) (v >>> 8);
                    }
                }
                case 3 -> { // cut short, the message length following
                    b = Arrays.copyOf(b, 16 + r.nextInt(Math.max(1, b.length - 16)));
                    ByteBuffer.wrap(b).order(ByteOrder.nativeOrder()).putInt(0, b.length);
                }
                case 4 -> { // four bytes inserted, the message length following
                    int at = 16 + r.nextInt(Math.max(1, b.length - 16));
                    byte[] longer = new byte[b.length + 4];
                    System.arraycopy(b, 0, longer, 0, at);
                    for (int i = 0; i < 4; i++) {
                        longer[at + i] = (byte) r.nextInt(256);
                    }
                    System.arraycopy(b, at, longer, at + 4, b.length - at);
                    b = longer;
                    ByteBuffer.wrap(b).order(ByteOrder.nativeOrder()).putInt(0, b.length);
                }
                default -> { // the message type: another nf_tables message, or an error message
                    int type = r.nextInt(4) == 0 ? 2 : (10 << 8) | r.nextInt(26);
                    ByteBuffer.wrap(b).order(ByteOrder.nativeOrder()).putShort(4, (short) type);
                }
            }
        }
        return b;
    }
}
