package io.nftproxy.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The bench's written results: notes that hold commas stay one CSV field, and a slow change says where its time went. */
class ReportTest {
    @Test
    void aNoteWithCommasIsOneQuotedField() {
        assertEquals("kernel slab +66 MB", Report.csvField("kernel slab +66 MB"));
        assertEquals("\"largest 4.0 ms: kernel 1.0, render 2.0\"", Report.csvField("largest 4.0 ms: kernel 1.0, render 2.0"));
        assertEquals("\"say \"\"hi\"\"\"", Report.csvField("say \"hi\""));
    }

    @Test
    void theLargestChangeIsSplitIntoKernelRenderAndTheRest() {
        assertEquals("largest 41.5 ms: kernel 2.0, render 1.5, rest 38.0; GC pauses 35",
                CompareBench.describe(41_500_000, new SyncBackend.Breakdown(2_000_000, 1_500_000, 35)));
        assertEquals("largest 1.0 ms: kernel 0.8, render 0.5, rest 0.0; GC pauses 0",
                CompareBench.describe(1_000_000, new SyncBackend.Breakdown(800_000, 500_000, 0)), "never a negative rest");
    }
}
