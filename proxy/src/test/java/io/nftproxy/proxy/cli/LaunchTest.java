package io.nftproxy.proxy.cli;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class LaunchTest {
    @Test
    void iptablesModeWithoutIptablesRestoreIsRefusedInOneLine() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Launch.checkBackend(true, tool -> false));
        assertEquals("iptables mode needs iptables-restore, which is not installed here: use mode nftables, or install"
                + " iptables", e.getMessage());
        assertDoesNotThrow(() -> Launch.checkBackend(true, "iptables-restore"::equals));
        assertDoesNotThrow(() -> Launch.checkBackend(false, tool -> false));
    }
}
