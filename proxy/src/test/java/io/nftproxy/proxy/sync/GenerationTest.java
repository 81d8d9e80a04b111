package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.render.TableNames;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Dynset;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.netlink.nft.expr.Lookup;
import io.nftproxy.proxy.render.NftRenderer;

/**
 * A generation renames every set and every chain but the base chains, wherever a transaction
 * names them (declarations, rules' lookups and jumps, verdict elements), and nothing else.
 */
class GenerationTest {
    /** A first sync of services of every shape, one transaction, as the renderer names it. */
    private static Transaction firstSync() throws Exception {
        List<Transaction> sent = new ArrayList<>();
        Syncer syncer = new Syncer(null, new NftRenderer(FirstSyncInBatchesKernelTest.config()), "nftproxy");
        syncer.commitThrough(new DryRun(sent::add));
        syncer.sync(FirstSyncInBatchesKernelTest.state(120), null);
        assertEquals(1, sent.size());
        return sent.get(0);
    }

    @Test
    void theSecondGenerationRenamesEveryReferenceAndTheBaseChainsKeepTheirNames() throws Exception {
        Transaction tx = firstSync();
        assertSame(tx, Generation.FIRST.apply(tx), "generation 0 is the renderer's names");
        Transaction renamed = Generation.SECOND.apply(tx);
        assertEquals(tx.size(), renamed.size());
        Set<String> declaredSets = new HashSet<>();
        Set<String> declaredChains = new HashSet<>();
        Set<String> referencedSets = new HashSet<>();
        Set<String> referencedChains = new HashSet<>();
        int verdictElements = 0;
        for (Op op : renamed.ops()) {
            if (op.object() instanceof Chain c) {
                declaredChains.add(c.name());
                assertTrue(c.base() != null ? TableNames.BASE_CHAINS.contains(c.name()) : c.name().endsWith(Generation.SUFFIX), c.name());
            } else if (op.object() instanceof NftSet s) {
                declaredSets.add(s.name());
            } else if (op.object() instanceof Elements e) {
                referencedSets.add(e.set());
                for (SetElement el : e.elements()) {
                    if (el.data() instanceof Verdict v && v.chain() != null) {
                        referencedChains.add(v.chain());
                        verdictElements++;
                    }
                }
            } else if (op.object() instanceof Rule r) {
                referencedChains.add(r.chain());
                for (Expr x : r.exprs()) {
                    if (x instanceof Lookup l) {
                        referencedSets.add(l.set());
                    } else if (x instanceof Dynset d) {
                        referencedSets.add(d.set());
                    } else if (x instanceof Immediate i && i.data() instanceof Verdict v && v.chain() != null) {
                        referencedChains.add(v.chain());
                    }
                }
            }
        }
        assertTrue(verdictElements > 0 && declaredSets.size() > 50 && referencedSets.size() > 50, "a full table");
        for (String s : declaredSets) {
            assertTrue(s.endsWith(Generation.SUFFIX), s);
        }
        assertTrue(declaredSets.containsAll(referencedSets), "every set named is declared under its new name");
        assertTrue(declaredChains.containsAll(referencedChains), "every chain named is declared under its new name");
        assertTrue(declaredChains.containsAll(TableNames.BASE_CHAINS), "the base chains, named as ever");
        for (String c : referencedChains) {
            assertTrue(c.endsWith(Generation.SUFFIX) || TableNames.BASE_CHAINS.contains(c), c);
        }
    }

    @Test
    void namesComeBackAndGenerationsAlternate() {
        assertEquals("service-ips", Generation.original("service-ips.g1"));
        assertEquals("service-ips", Generation.original("service-ips"));
        assertEquals(Generation.SECOND, Generation.of("ip-pick-3.g1"));
        assertEquals(Generation.FIRST, Generation.of("svc-default/web/tcp/80"));
        assertEquals(Generation.SECOND, Generation.FIRST.other());
        assertEquals(Generation.FIRST, Generation.SECOND.other());
        assertEquals("nat-prerouting", Generation.SECOND.chain("nat-prerouting"));
        assertEquals("services.g1", Generation.SECOND.chain("services"));
        assertEquals("services", Generation.FIRST.chain("services"));
        assertThrows(IllegalArgumentException.class, () -> new Generation(2));
    }
}
