package io.nftproxy.netlink.nft.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nftproxy.netlink.nft.Fixture;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Our encoding against nft's without root: every fixture rule, encoded to bytes and read back,
 * must be the expressions nft sends for the same rule, as checked in from
 * {@code nft --debug=netlink} ({@link EncodingOracleKernelTest} keeps that file true to nft).
 */
class EncodingGoldenTest {
    @Test
    void everyRuleEncodesAsNftEncodedIt() throws Exception {
        NftDebugOracle o = new NftDebugOracle(new Fixture());
        List<List<String>> theirs = NftDebugOracle.golden();
        List<List<String>> ours = o.ours();
        assertEquals(theirs.size(), ours.size(), "one expression block per fixture rule in " + NftDebugOracle.GOLDEN);
        for (int i = 0; i < ours.size(); i++) {
            assertEquals(theirs.get(i), ours.get(i), "rule " + i + " in chain " + o.rules.get(i).chain());
        }
    }
}
