package io.nftproxy.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;

/** Which samples of {@code perf script -F ip,sym} count as time in nft_do_chain. */
class KernelTimeTest {
    @Test
    void aSampleCountsOnceWhenNftDoChainIsOnItsStack() {
        List<String> out = """
                \tffffffff81c3a0b0 nft_rhash_lookup
                \tffffffff81c2f6c1 nft_lookup_eval
                \tffffffff81c1e2a3 nft_do_chain
                \tffffffff81c1f0d2 nft_do_chain_ipv4
                \tffffffff81b8e2a1 nf_hook_slow

                \tffffffff81c1e2a3 nft_do_chain
                \tffffffff81c1e2a3 nft_do_chain
                \tffffffff81c1f0d2 nft_do_chain_ipv4

                \tffffffff81c1f0d2 nft_do_chain_ipv4
                \tffffffff81b8e2a1 nf_hook_slow

                \t    7fe9e4970979 [unknown]
                """.lines().toList();
        assertEquals(2, KernelTime.inChain(out), "the wrapper alone is not the chain's evaluation; a stack counts once");
    }
}
