package io.nftproxy.proxy.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.proxy.cli.Main;
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/** The command line as users and scripts drive it: run with a config file, dump, cleanup, takeover. */
class CliKernelTest {
    @Test
    void configFileDumpTakeoverAndCleanup(@TempDir Path dir) throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-cli"); NftClient nft = NftClient.open(ns.ns())) {
            new Manifests().service("web", "10.96.0.10", "[{name: http, port: 80}]")
                    .slice("web", "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}]", "10.244.1.2@n1")
                    .write(dir, "web.yaml");
            Path cfg = dir.resolve("config.yaml");
            Files.writeString(cfg, """
                    apiVersion: kubeproxy.config.k8s.io/v1alpha1
                    kind: KubeProxyConfiguration
                    hostnameOverride: node-from-file
                    clusterCIDR: 10.244.0.0/16
                    mode: nftables
                    nftables:
                      masqueradeBit: 13
                    """);
            Path manifests = dir;
            // A previous run left a stale chain behind: the first sync replaces the table whole.
            nft.commit(new Transaction().add(new Table(Family.IP, "nftproxy"))
                    .add(Chain.regular(Family.IP, "nftproxy", "stale-from-an-old-version")));

            ProxyRun.Result run = ProxyRun.cli("run", "--manifests", manifests.toString(), "--config", cfg.toString(),
                    "--netns", ns.name(), "--once");
            assertEquals(0, run.exit(), run.err());
            assertTrue(run.out().startsWith("synced "), run.out());

            ProxyRun.Result dump = ProxyRun.cli("dump", "--netns", ns.name(), "--family", "ip");
            assertEquals(0, dump.exit(), dump.err());
            assertTrue(dump.out().contains("meta mark set meta mark | 0x00002000"), "masqueradeBit 13 from the file");
            assertTrue(dump.out().contains("10.244.0.0-10.244.255.255"), "clusterCIDR from the file");
            assertTrue(dump.out().contains(" : 10.244.1.2 . 8080"), dump.out());
            assertFalse(dump.out().contains("stale-from-an-old-version"), "the old table was replaced");

            ProxyRun.Result flagWins = ProxyRun.cli("run", "--manifests", manifests.toString(), "--config", cfg.toString(),
                    "--masquerade-bit", "12", "--netns", ns.name(), "--once");
            assertEquals(0, flagWins.exit(), flagWins.err());
            assertTrue(ProxyRun.cli("dump", "--netns", ns.name()).out().contains("meta mark | 0x00001000"),
                    "flags override the file");
            // The second run took the first's table over beside it, and then its own names back.
            assertTrue(ns.exec("nft", "list", "set", "ip", "nftproxy", "service-ips").contains("10.96.0.10 . tcp . 80"),
                    "the set under the name docs/ruleset.md gives it");
            assertFalse(ns.exec("nft", "list", "table", "ip", "nftproxy").contains(".g1"));

            ProxyRun.Result clean = ProxyRun.cli("cleanup", "--netns", ns.name());
            assertEquals(0, clean.exit(), clean.err());
            assertEquals(List.of(), nft.listTables(null), "cleanup removed both tables");
            assertEquals("", ns.exec("nft", "list", "ruleset").trim());
            assertEquals(3, ProxyRun.cli("dump", "--netns", ns.name()).exit(), "dump says there is nothing");
        }
    }

    /**
     * {@code nftproxy run} sets conntrack's timeouts as kube-proxy's start does (its defaults, or
     * the flags), in the namespace it programs: the e2e test "should set TCP CLOSE_WAIT timeout"
     * holds for a node run with it as for one run with kube-proxy's command line.
     */
    @Test
    void runSetsConntrackAsKubeProxyInTheNamespaceItPrograms(@TempDir Path dir) throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-ct")) {
            new Manifests().service("web", "10.96.0.10", "[{name: http, port: 80}]")
                    .slice("web", "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}]", "10.244.1.2@n1")
                    .write(dir, "web.yaml");
            assertEquals("60", ns.exec("sysctl", "-n", "net.netfilter.nf_conntrack_tcp_timeout_close_wait").trim(),
                    "the kernel's default in a new namespace");
            ProxyRun.Result run = ProxyRun.cli("run", "--manifests", dir.toString(), "--netns", ns.name(), "--once",
                    "--hostname-override", "n");
            assertEquals(0, run.exit(), run.err());
            assertEquals("3600", ns.exec("sysctl", "-n", "net.netfilter.nf_conntrack_tcp_timeout_close_wait").trim());
            assertEquals("86400", ns.exec("sysctl", "-n", "net.netfilter.nf_conntrack_tcp_timeout_established").trim());

            ProxyRun.Result flags = ProxyRun.cli("run", "--manifests", dir.toString(), "--netns", ns.name(), "--once",
                    "--hostname-override", "n", "--conntrack-tcp-timeout-close-wait", "2h", "--conntrack-tcp-be-liberal");
            assertEquals(0, flags.exit(), flags.err());
            assertEquals("7200", ns.exec("sysctl", "-n", "net.netfilter.nf_conntrack_tcp_timeout_close_wait").trim());
            assertEquals("1", ns.exec("sysctl", "-n", "net.netfilter.nf_conntrack_tcp_be_liberal").trim());

            ProxyRun.Result bad = ProxyRun.cli("run", "--manifests", dir.toString(), "--netns", ns.name(), "--once",
                    "--hostname-override", "n", "--conntrack-udp-timeout", "soon");
            assertEquals(2, bad.exit(), bad.err());
            assertTrue(bad.err().contains("--conntrack-udp-timeout 'soon'") && bad.err().lines().count() == 1, bad.err());
        }
    }

    /** A file a one-shot cannot use at all: the others are synced, and the exit status says what is missing. */
    @Test
    void aFileRefusedWholeEndsTheOneShotWithOne(@TempDir Path dir) throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-refused")) {
            new Manifests().service("web", "10.96.0.10", "[{name: http, port: 80}]")
                    .slice("web", "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}]", "10.244.1.2@n1")
                    .write(dir, "web.yaml");
            String[] once = {"run", "--manifests", dir.toString(), "--netns", ns.name(), "--once", "--hostname-override", "n"};
            ProxyRun.Result first = ProxyRun.cli(once);
            assertEquals(0, first.exit(), first.err());
            new Manifests().service("api", "10.96.0.11", "[{name: http, port: 80}]")
                    .slice("api", "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}]", "10.244.1.3@n1")
                    .write(dir, "api.yaml");
            Files.writeString(dir.resolve("web.yaml"), "kind: Service\nmetadata: {name: web\n");

            ProxyRun.Result refused = ProxyRun.cli(once);
            assertEquals(1, refused.exit(), refused.err());
            assertTrue(refused.err().contains("file web.yaml: does not parse")
                    && refused.err().contains("1 file of manifests in " + dir + " could not be used"), refused.err());
            String rules = ns.exec("nft", "list", "ruleset");
            assertTrue(rules.contains("10.244.1.3 . 8080"), "the other file was synced: " + rules);
            assertFalse(rules.contains("10.244.1.2"), "what the refused file held is gone, as the error says: " + rules);
        }
    }

    @Test
    void clearErrors() {
        ProxyRun.Result noSource = ProxyRun.cli("run", "--once");
        assertEquals(2, noSource.exit());
        assertTrue(noSource.err().contains("give exactly one of --manifests DIR, --kubeconfig PATH (or --master URL) or --in-cluster"),
                noSource.err());
        ProxyRun.Result ipvs = ProxyRun.cli("run", "--mode", "ipvs", "--manifests", "/tmp", "--once");
        assertEquals(2, ipvs.exit());
        assertTrue(ipvs.err().contains("unknown --mode 'ipvs' (expected nftables or iptables)"), ipvs.err());
        ProxyRun.Result badNs = ProxyRun.cli("dump", "--netns", "no-such-namespace-xyz");
        assertEquals(1, badNs.exit());
        assertTrue(badNs.err().contains("/run/netns/no-such-namespace-xyz"), badNs.err());
        ProxyRun.Result badCidr = ProxyRun.cli("run", "--manifests", "/tmp", "--cluster-cidr", "10.0.0.0/99", "--once",
                "--hostname-override", "n");
        assertEquals(1, badCidr.exit());
        assertTrue(badCidr.err().contains("--cluster-cidr '10.0.0.0/99': ") && badCidr.err().contains("prefix /99 out of range"),
                badCidr.err());
    }

    /** The command line in a new JVM with one capability dropped from its bounding set; stderr, or null on timeout. */
    private static String withoutCapability(String cap, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("setpriv", "--bounding-set=-" + cap,
                ProcessHandle.current().info().command().orElse("java"), "-cp", System.getProperty("java.class.path"),
                Main.class.getName()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(p.getInputStream().readAllBytes());
            } catch (IOException e) {
                return e.toString();
            }
        });
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return null;
        }
        return out.get() + "exit " + p.exitValue();
    }

    @Test
    void withoutPrivilegeItSaysWhichAtOnce(@TempDir Path dir) throws Exception {
        Kernel.require();
        Files.writeString(dir.resolve("s.yaml"), "kind: Service\nmetadata: {name: a}\nspec: {clusterIP: 10.96.0.1,"
                + " ports: [{port: 80}]}\n");
        String noNetAdmin = withoutCapability("net_admin", "run", "--manifests", dir.toString(), "--once",
                "--hostname-override", "n");
        assertTrue(noNetAdmin != null, "it answered instead of waiting for a reply that never comes");
        assertTrue(noNetAdmin.contains("CAP_NET_ADMIN") && noNetAdmin.endsWith("exit 1"), noNetAdmin);
        try (TestNetns ns = TestNetns.create("nftp-cap")) {
            String noSysAdmin = withoutCapability("sys_admin", "run", "--manifests", dir.toString(), "--once",
                    "--hostname-override", "n", "--netns", ns.name());
            assertTrue(noSysAdmin != null && noSysAdmin.contains("needs CAP_SYS_ADMIN"), String.valueOf(noSysAdmin));
        }
    }

    @Test
    void aPortInUseIsNamedByItsFlag(@TempDir Path dir) throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-port"); ServerSocket taken = new ServerSocket(0, 1,
                InetAddress.getLoopbackAddress())) {
            ProxyRun.Result r = ProxyRun.cli("run", "--manifests", dir.toString(), "--netns", ns.name(), "--hostname-override", "n",
                    "--metrics-bind-address", "127.0.0.1:" + taken.getLocalPort(), "--healthz-bind-address", "127.0.0.1:0");
            assertEquals(1, r.exit(), r.err());
            assertTrue(r.err().contains("--metrics-bind-address 127.0.0.1:" + taken.getLocalPort() + ": Address already in use"),
                    r.err());
        }
    }
}
