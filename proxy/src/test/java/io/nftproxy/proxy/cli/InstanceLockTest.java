package io.nftproxy.proxy.cli;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The instance lock in a directory of the test's own, in this process's namespace: no root needed. */
class InstanceLockTest {
    @Test
    void oneHolderPerNamespaceAndTable(@TempDir Path dir) throws Exception {
        try (InstanceLock first = InstanceLock.acquire(dir, null, "nftproxy")) {
            assertNotNull(first);
            IOException e = assertThrows(IOException.class, () -> InstanceLock.acquire(dir, null, "nftproxy"));
            assertTrue(e.getMessage().contains("another nftproxy (pid " + ProcessHandle.current().pid()
                    + ") already programs table nftproxy in this network namespace"), e.getMessage());
            try (InstanceLock other = InstanceLock.acquire(dir, null, "other")) {
                assertNotNull(other, "another table is another instance's");
            }
        }
        try (InstanceLock again = InstanceLock.acquire(dir, null, "nftproxy")) {
            assertNotNull(again, "the lock goes with its holder");
        }
    }

    @Test
    void withoutAPlaceForTheLockItRunsAndSaysSo(@TempDir Path dir) throws Exception {
        Path notADirectory = Files.writeString(dir.resolve("file"), "x");
        assertNull(InstanceLock.acquire(notADirectory, null, "nftproxy"));
    }
}
