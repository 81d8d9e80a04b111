package io.nftproxy.proxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.management.ManagementFactory;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.sun.management.HotSpotDiagnosticMXBean;

import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.proxy.sync.SyncResult;

/**
 * The settled heap's free ratios, as the launcher asks for them: set once, after the first full
 * sync, in this very JVM (the flags are ones a running JVM lets change); not after a partial sync,
 * not without the launcher's property. The test JVM's own ratios are put back afterwards.
 */
class StartHeapReleaseTest {
    private final HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
    private String min;
    private String max;

    @BeforeEach
    void remember() {
        min = hotspot.getVMOption("MinHeapFreeRatio").getValue();
        max = hotspot.getVMOption("MaxHeapFreeRatio").getValue();
    }

    @AfterEach
    void restore() {
        System.clearProperty(StartHeapRelease.SETTLED_FREE_RATIO);
        // The maximum first when raising it above a minimum that is lower now, as the JVM checks the pair.
        hotspot.setVMOption("MaxHeapFreeRatio", max);
        hotspot.setVMOption("MinHeapFreeRatio", min);
    }

    static SyncResult sync(boolean full) {
        return new SyncResult(full, CommitStats.EMPTY, 0, 0, 0, 0, List.of(), 0);
    }

    @Test
    void setAfterTheFirstFullSyncOnly() {
        System.setProperty(StartHeapRelease.SETTLED_FREE_RATIO, "11,21");
        StartHeapRelease release = new StartHeapRelease(Integer.MAX_VALUE);
        release.synced(sync(false), 0, null);
        assertEquals(min, hotspot.getVMOption("MinHeapFreeRatio").getValue(), "not after a partial sync");
        release.synced(sync(true), 0, null);
        assertEquals("11", hotspot.getVMOption("MinHeapFreeRatio").getValue());
        assertEquals("21", hotspot.getVMOption("MaxHeapFreeRatio").getValue());
    }

    @Test
    void leftAsTheyAreWithoutTheLaunchersAsking() {
        new StartHeapRelease(Integer.MAX_VALUE).synced(sync(true), 0, null);
        assertEquals(min, hotspot.getVMOption("MinHeapFreeRatio").getValue());
        assertEquals(max, hotspot.getVMOption("MaxHeapFreeRatio").getValue());
    }
}
