package io.nftproxy.proxy.cli;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.model.Cidr;

class LaunchTest {
    /** nodePortAddresses' keywords: primary (empty: decided per node), all (every address), localhost refused by name. */
    @Test
    void nodePortAddressKeywords() {
        assertEquals(List.of(), RunCommand.nodePortCidrs(List.of("primary"), "--nodeport-addresses"));
        assertEquals(List.of(Cidr.parse("0.0.0.0/0"), Cidr.parse("::/0")),
                RunCommand.nodePortCidrs(List.of("all"), "--nodeport-addresses"));
        assertEquals(List.of(Cidr.parse("10.0.0.0/8")), RunCommand.nodePortCidrs(List.of("10.0.0.0/8"), "nodePortAddresses"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RunCommand.nodePortCidrs(List.of("primary", "localhost"), "nodePortAddresses"));
        assertTrue(e.getMessage().startsWith("nodePortAddresses: 'localhost' (kube-proxy's alpha"), e.getMessage());
    }

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
