package io.nftproxy.netlink.nft.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class BatchSequencesTest {
    @Test
    void mapsEachSequenceToTheOperationThatWroteIt() {
        BatchSequences seqs = new BatchSequences(1000);
        // Operation 0 writes one message, operation 1 forty (a large element list), operation 2 one.
        assertEquals(1000, seqs.next(0));
        for (int i = 0; i < 40; i++) {
            assertEquals(1001 + i, seqs.next(1));
        }
        assertEquals(1041, seqs.next(2));
        assertEquals(42, seqs.messages());
        assertEquals(1041, seqs.last());
        assertEquals(0, seqs.operation(1000));
        assertEquals(1, seqs.operation(1001));
        assertEquals(1, seqs.operation(1040));
        assertEquals(2, seqs.operation(1041));
        // BATCH_BEGIN, BATCH_END and anything else belong to no operation.
        assertEquals(-1, seqs.operation(999));
        assertEquals(-1, seqs.operation(1042));
    }

    @Test
    void sequencesWrapAroundLikeTheSocketsDo() {
        BatchSequences seqs = new BatchSequences(Integer.MAX_VALUE);
        assertEquals(Integer.MAX_VALUE, seqs.next(0));
        assertEquals(Integer.MIN_VALUE, seqs.next(1));
        assertEquals(0, seqs.operation(Integer.MAX_VALUE));
        assertEquals(1, seqs.operation(Integer.MIN_VALUE));
    }
}
