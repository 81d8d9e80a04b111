package io.nftproxy.netlink.nft.client;

import java.util.Arrays;

/**
 * Which operation of a transaction wrote each message of a batch, by the message's sequence
 * number, so that an error the kernel returns for one message names the operation behind it.
 *
 * <p>An operation may write several messages (elements are split to fit a message) and the
 * sequence numbers of a batch are consecutive, so the map is an array indexed by the offset from
 * the first message: a batch of a million messages costs four megabytes, not a million boxed
 * entries.
 */
final class BatchSequences {
    private final int first;
    private int[] ops = new int[16];
    private int count;

    /** @param first the sequence number the batch's first message (after BATCH_BEGIN) will carry */
    BatchSequences(int first) {
        this.first = first;
    }

    /** Assigns the next sequence number to a message written by operation {@code op}. */
    int next(int op) {
        if (count == ops.length) {
            ops = Arrays.copyOf(ops, count * 2);
        }
        ops[count] = op;
        return first + count++;
    }

    /** The number of messages assigned. */
    int messages() {
        return count;
    }

    /** The sequence number of the last message assigned. */
    int last() {
        return first + count - 1;
    }

    /** The operation whose message carried {@code seq}, or -1 if no message of this batch did. */
    int operation(int seq) {
        int i = seq - first;
        return i >= 0 && i < count ? ops[i] : -1;
    }
}
