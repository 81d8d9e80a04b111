package io.nftproxy.netlink.nft.wire;

import io.nftproxy.netlink.nft.Fixture;
import io.nftproxy.netlink.nft.client.NftClient;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.testkit.TestNetns;

/**
 * Holds our encoding against nft's: every fixture rule is printed as nft syntax, nft compiles it
 * ({@code nft --debug=netlink}), and the expressions nft sends must be ours, field for field. The
 * same output is checked in for {@link EncodingGoldenTest}: this test fails when it no longer is
 * what nft prints, and rewrites it with {@code NFTPROXY_UPDATE_GOLDEN=1}.
 */
class EncodingOracleKernelTest {
    @Test
    void everyRuleEncodesAsNftEncodesIt() throws Exception {
        NftDebugOracle o = new NftDebugOracle(new Fixture());
        try (TestNetns ns = TestNetns.create("nftp-or"); NftClient c = NftClient.open(ns.ns())) {
            c.commit(o.objects);
            String debug = ns.execInput(o.script, "nft", "--debug=netlink", "-f", "-");
            List<List<String>> theirs = DebugFormat.parseNftDebug(debug);
            assertEquals(o.rules.size(), theirs.size(), "one expression block per rule in:\n" + debug);
            List<List<String>> ours = o.ours();
            for (int i = 0; i < o.rules.size(); i++) {
                assertEquals(theirs.get(i), ours.get(i), "rule " + i + " in chain " + o.rules.get(i).chain() + ": "
                        + o.script.lines().skip(i).findFirst().orElse(""));
            }
            if ("1".equals(System.getenv("NFTPROXY_UPDATE_GOLDEN"))) {
                Files.createDirectories(NftDebugOracle.GOLDEN_SOURCE.getParent());
                Files.writeString(NftDebugOracle.GOLDEN_SOURCE, debug);
            }
            assertEquals(theirs, NftDebugOracle.golden(), NftDebugOracle.GOLDEN + " is no longer what this nft prints;"
                    + " check the difference and rewrite it with NFTPROXY_UPDATE_GOLDEN=1");
        }
    }
}
