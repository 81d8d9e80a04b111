package io.nftproxy.proxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/** A second nftproxy for the same namespace and table is refused, naming the first. */
class InstanceLockKernelTest {
    @Test
    void aSecondInstanceIsRefused(@TempDir Path dir) throws Exception {
        Kernel.require();
        Files.writeString(dir.resolve("s.yaml"), "kind: Service\nmetadata: {name: a}\nspec: {clusterIP: 10.96.0.1, ports: [{port: 80}]}\n");
        try (TestNetns ns = TestNetns.create("nftp-lock")) {
            String[] run = {"run", "--manifests", dir.toString(), "--netns", ns.name(), "--once", "--hostname-override", "n"};
            try (InstanceLock first = InstanceLock.acquire(InstanceLock.DIR, ns.name(), "nftproxy")) {
                DryRunCliTest.Result r = DryRunCliTest.cli(run);
                assertEquals(1, r.exit(), r.err());
                assertTrue(r.err().contains("another nftproxy (pid " + ProcessHandle.current().pid()
                        + ") already programs table nftproxy in network namespace " + ns.name()), r.err());
                DryRunCliTest.Result other = DryRunCliTest.cli(run[0], run[1], run[2], run[3], run[4], run[5], run[6], run[7],
                        "--table", "other");
                assertEquals(0, other.exit(), "another table is another instance's: " + other.err());
            }
            DryRunCliTest.Result after = DryRunCliTest.cli(run);
            assertEquals(0, after.exit(), "the lock goes with its holder: " + after.err());
            ns.exec("nft", "delete", "table", "ip", "other");
        }
    }
}
