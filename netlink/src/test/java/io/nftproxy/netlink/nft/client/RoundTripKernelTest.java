package io.nftproxy.netlink.nft.client;

import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Fixture;
import io.nftproxy.netlink.nft.NftObject;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.client.NftClient;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.expr.Counter;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.testkit.TestNetns;

/** Writes every object type and expression through the library and reads it back with our decoder. */
class RoundTripKernelTest {

    static List<NftObject> added(Transaction tx, Class<?> type) {
        List<NftObject> out = new ArrayList<>();
        for (Op op : tx.ops()) {
            if (type.isInstance(op.object())) {
                out.add(op.object());
            }
        }
        return out;
    }

    /** Counters read back with the kernel's counts; compare what the rule does. */
    static Rule normalize(Rule r) {
        List<Expr> ex = new ArrayList<>();
        for (Expr e : r.exprs()) {
            ex.add(e instanceof Counter ? Counter.zero() : e);
        }
        return new Rule(r.family(), r.table(), r.chain(), ex, r.comment(), 0);
    }

    @Test
    void everyObjectAndExpressionReadsBackAsWritten() throws Exception {
        Fixture f = new Fixture();
        Transaction tx = f.transaction();
        try (TestNetns ns = TestNetns.create("nftp-rt"); NftClient c = NftClient.open(ns.ns())) {
            CommitStats st = c.commit(tx);
            assertEquals(tx.size(), st.operations());

            for (Family fam : List.of(Family.IP, Family.IP6, Family.INET)) {
                TableContents tc = c.readTable(fam, Fixture.T);
                List<Chain> wantChains = added(tx, Chain.class).stream().map(o -> (Chain) o)
                        .filter(ch -> ch.family() == fam).toList();
                assertEquals(new HashSet<>(wantChains), new HashSet<>(tc.chains()), "chains of " + fam);

                List<NftSet> wantSets = added(tx, NftSet.class).stream().map(o -> (NftSet) o)
                        .filter(s -> s.family() == fam).toList();
                assertEquals(new HashSet<>(wantSets), new HashSet<>(tc.sets()), "sets of " + fam);

                for (NftObject o : added(tx, Elements.class)) {
                    Elements e = (Elements) o;
                    if (e.family() != fam) {
                        continue;
                    }
                    Set<SetElement> got = new HashSet<>();
                    for (SetElement el : tc.elements().get(e.set())) {
                        got.add(el.withoutExpiry());
                    }
                    assertEquals(new HashSet<>(e.elements()), got, "elements of " + e.set());
                }

                List<Rule> wantRules = added(tx, Rule.class).stream().map(o -> (Rule) o)
                        .filter(r -> r.family() == fam).toList();
                for (Chain ch : wantChains) {
                    List<Rule> want = wantRules.stream().filter(r -> r.chain().equals(ch.name())).toList();
                    List<Rule> got = tc.rulesOf(ch.name()).stream().map(RoundTripKernelTest::normalize).toList();
                    assertEquals(want, got, "rules of chain " + ch.name());
                    for (Rule r : tc.rulesOf(ch.name())) {
                        assertTrue(r.handle() > 0, "the kernel assigns handles");
                    }
                }
            }
        }
    }
}
