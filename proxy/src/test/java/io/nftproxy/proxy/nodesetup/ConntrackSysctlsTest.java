package io.nftproxy.proxy.nodesetup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.proxy.config.KubeProxyConfiguration;
import io.nftproxy.proxy.config.KubeProxyConfiguration.Conntrack;

/** kube-proxy's conntrack set-up, as a table, and against files standing for /proc/sys and /sys. Run without root. */
class ConntrackSysctlsTest {
    static final Conntrack DEFAULTS = KubeProxyConfiguration.defaults().conntrack();

    static Map<String, Long> kernelDefaults() {
        Map<String, Long> m = new HashMap<>();
        m.put(ConntrackSysctls.MAX, 65536L);
        m.put(ConntrackSysctls.HASHSIZE, 16384L);
        m.put(ConntrackSysctls.ESTABLISHED, 432000L);
        m.put(ConntrackSysctls.CLOSE_WAIT, 60L);
        m.put(ConntrackSysctls.LIBERAL, 0L);
        m.put(ConntrackSysctls.UDP, 30L);
        m.put(ConntrackSysctls.UDP_STREAM, 120L);
        return m;
    }

    @Test
    void conntrackMaxAsKubeProxyComputesIt() {
        assertEquals(131072, ConntrackSysctls.conntrackMax(DEFAULTS, 2), "2 x 32768 is under the minimum");
        assertEquals(262144, ConntrackSysctls.conntrackMax(DEFAULTS, 8), "8 x 32768");
        assertEquals(1 << 20, ConntrackSysctls.conntrackMax(DEFAULTS, 256), "capped at 1,048,576");
        Conntrack off = new Conntrack(0, 131072, Duration.ZERO, Duration.ZERO, false, Duration.ZERO, Duration.ZERO);
        assertEquals(0, ConntrackSysctls.conntrackMax(off, 8), "maxPerCore 0 leaves it, and ignores min");
    }

    @Test
    void theDefaultsOnAFreshKernel() {
        List<ConntrackSysctls.Write> plan = ConntrackSysctls.plan(DEFAULTS, 2, kernelDefaults(), true);
        assertEquals(List.of(new ConntrackSysctls.Write(ConntrackSysctls.MAX, 65536, 131072),
                new ConntrackSysctls.Write(ConntrackSysctls.HASHSIZE, 16384, 32768),
                new ConntrackSysctls.Write(ConntrackSysctls.ESTABLISHED, 432000, 86400),
                new ConntrackSysctls.Write(ConntrackSysctls.CLOSE_WAIT, 60, 3600)), plan);
    }

    @Test
    void nothingIsWrittenThatIsAlreadySetAndNothingIsLowered() {
        Map<String, Long> now = kernelDefaults();
        now.put(ConntrackSysctls.MAX, 262144L); // a node set higher keeps it
        now.put(ConntrackSysctls.HASHSIZE, 65536L);
        now.put(ConntrackSysctls.ESTABLISHED, 86400L);
        now.put(ConntrackSysctls.CLOSE_WAIT, 3600L);
        assertEquals(List.of(), ConntrackSysctls.plan(DEFAULTS, 2, now, true),
                "after --init-only, the NET_ADMIN-only container writes nothing");
    }

    @Test
    void outsideTheHostsNamespaceTheGlobalSettingsAreLeftAlone() {
        Conntrack all = new Conntrack(32768, 131072, Duration.ofHours(2), Duration.ofMinutes(5), true, Duration.ofSeconds(45),
                Duration.ofMinutes(3));
        assertEquals(List.of(new ConntrackSysctls.Write(ConntrackSysctls.ESTABLISHED, 432000, 7200),
                new ConntrackSysctls.Write(ConntrackSysctls.CLOSE_WAIT, 60, 300),
                new ConntrackSysctls.Write(ConntrackSysctls.LIBERAL, 0, 1),
                new ConntrackSysctls.Write(ConntrackSysctls.UDP, 30, 45),
                new ConntrackSysctls.Write(ConntrackSysctls.UDP_STREAM, 120, 180)),
                ConntrackSysctls.plan(all, 2, kernelDefaults(), false));
    }

    @Test
    void zeroLeavesASettingAloneAndBeLiberalIsNeverTurnedOff() {
        Conntrack zero = new Conntrack(0, 0, Duration.ZERO, Duration.ZERO, false, Duration.ZERO, Duration.ZERO);
        Map<String, Long> now = kernelDefaults();
        now.put(ConntrackSysctls.LIBERAL, 1L);
        assertEquals(List.of(), ConntrackSysctls.plan(zero, 2, now, true));
    }

    @Test
    void appliedToFilesAndAFailureNamesTheSettingAndTheRemedy(@TempDir Path dir) throws Exception {
        Path procSys = dir.resolve("proc/sys");
        Path sys = dir.resolve("sys");
        Files.createDirectories(procSys.resolve("net/netfilter"));
        Files.createDirectories(sys.resolve("module/nf_conntrack/parameters"));
        for (Map.Entry<String, Long> e : kernelDefaults().entrySet()) {
            Path f = e.getKey().equals(ConntrackSysctls.HASHSIZE) ? sys.resolve("module/nf_conntrack/parameters/hashsize")
                    : procSys.resolve(e.getKey());
            Files.writeString(f, e.getValue() + "\n");
        }
        List<ConntrackSysctls.Write> wrote = ConntrackSysctls.apply(DEFAULTS, procSys, sys, false);
        assertEquals(2, wrote.size(), wrote.toString());
        assertEquals("86400", Files.readString(procSys.resolve(ConntrackSysctls.ESTABLISHED)).trim());
        assertEquals("65536", Files.readString(procSys.resolve(ConntrackSysctls.MAX)).trim(), "not the host's namespace");
        assertEquals(List.of(), ConntrackSysctls.apply(DEFAULTS, procSys, sys, false), "set: nothing more to write");

        Files.delete(procSys.resolve(ConntrackSysctls.CLOSE_WAIT));
        Files.createDirectory(procSys.resolve(ConntrackSysctls.CLOSE_WAIT)); // cannot be written
        ConntrackSysctls.SetupException e = assertThrows(ConntrackSysctls.SetupException.class,
                () -> ConntrackSysctls.apply(DEFAULTS, procSys, sys, false));
        assertTrue(e.getMessage().startsWith("conntrack: cannot set net/netfilter/nf_conntrack_tcp_timeout_close_wait to 3600"
                + " (now unreadable): "), e.getMessage());
        assertTrue(e.getMessage().contains("run kube-proxy --init-only with privilege first"), e.getMessage());
    }
}
