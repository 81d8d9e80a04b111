package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Hook;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.DesiredChain;
import io.nftproxy.proxy.render.EndpointSlots;
import io.nftproxy.proxy.render.Fragment;

/** How a first sync is cut into transactions: the globals alone, whole services, owners of chains first. */
class FirstSyncBatchesTest {

    private static Contributor port(String svc, String port) {
        return Contributor.of(new ServicePortName("ns", svc, port, Protocol.TCP));
    }

    /** A fragment of {@code elements} elements and, when {@code rules} > 0, one chain of that many rules. */
    private static Fragment fragment(int elements, int rules) {
        List<SetElement> els = new ArrayList<>();
        for (int i = 0; i < elements; i++) {
            els.add(SetElement.of(Bytes.host32(i)));
        }
        Map<String, DesiredChain> chains = new LinkedHashMap<>();
        if (rules > 0) {
            List<Rule> rs = new ArrayList<>();
            for (int i = 0; i < rules; i++) {
                rs.add(Rule.of(Family.IP, "t", "c", List.of()));
            }
            chains.put("c", new DesiredChain(new Chain(Family.IP, "t", "c", null, null), rs));
        }
        return new Fragment(chains, Map.of(), elements == 0 ? Map.of() : Map.of("s", els), Set.of(), EndpointSlots.NONE);
    }

    private static Map<IpFamily, Map<Contributor, Fragment>> v4(Object... pairs) {
        Map<Contributor, Fragment> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put((Contributor) pairs[i], (Fragment) pairs[i + 1]);
        }
        Map<IpFamily, Map<Contributor, Fragment>> out = new EnumMap<>(IpFamily.class);
        out.put(IpFamily.V4, m);
        return out;
    }

    @Test
    void weightCountsElementsRulesChainsAndSets() {
        assertEquals(10, FirstSyncBatches.weight(fragment(10, 0)));
        assertEquals(10 + 1 + 4, FirstSyncBatches.weight(fragment(10, 4)));
        assertEquals(0, FirstSyncBatches.weight(Fragment.EMPTY));
    }

    @Test
    void globalsAloneThenOwnersOfChainsThenTheRestUpToTheLimit() {
        var a = port("a", "http");
        var b = port("b", "http");
        var c = port("c", "http");
        var d = port("d", "http");
        var e = port("e", "http");
        var changes = v4(Contributor.GLOBALS, fragment(500, 50), a, fragment(40, 0), b, fragment(30, 9), c, fragment(40, 0),
                d, fragment(30, 0), e, fragment(30, 9));
        // Limit 100: b and e own chains (weight 40 each) go first, together; then a+c (80); then d.
        assertEquals(List.of(List.of(Contributor.GLOBALS), List.of(b, e), List.of(a, c), List.of(d)),
                FirstSyncBatches.of(changes, 100));
        // A limit below a service's weight: that service alone.
        assertEquals(List.of(List.of(Contributor.GLOBALS), List.of(b), List.of(e), List.of(a), List.of(c), List.of(d)),
                FirstSyncBatches.of(changes, 10));
    }

    @Test
    void aServicesPortsAndFamiliesGoTogether() {
        var http = port("a", "http");
        var https = port("a", "https");
        var other = port("b", "http");
        Map<IpFamily, Map<Contributor, Fragment>> changes = v4(http, fragment(60, 0), other, fragment(60, 0), https, fragment(60, 0));
        Map<Contributor, Fragment> v6 = new LinkedHashMap<>();
        v6.put(other, fragment(60, 0));
        changes.put(IpFamily.V6, v6);
        // a weighs 120 (over the limit: alone, both ports); b weighs 120 over both families.
        assertEquals(List.of(List.of(http, https), List.of(other)), FirstSyncBatches.of(changes, 100));
        assertEquals(List.of(List.of(http, https, other)), FirstSyncBatches.of(changes, 1000));
    }

    @Test
    void aServiceThatGoesWeighsNothing() {
        var a = port("a", "http");
        var b = port("b", "http");
        assertEquals(List.of(List.of(a, b)), FirstSyncBatches.of(v4(a, null, b, fragment(100, 0)), 100));
    }
    @Test
    void eachBatchIsAsLargeAsAskedForWhenItIsTaken() {
        var a = port("a", "http");
        var b = port("b", "http");
        var c = port("c", "http");
        var d = port("d", "http");
        FirstSyncBatches.Queue q = FirstSyncBatches.queue(v4(Contributor.GLOBALS, fragment(5, 0), a, fragment(40, 0),
                b, fragment(40, 0), c, fragment(40, 0), d, fragment(10, 2)));
        assertEquals(new FirstSyncBatches.Batch(List.of(Contributor.GLOBALS), 0), q.next(1000), "the globals alone");
        assertEquals(new FirstSyncBatches.Batch(List.of(d), 10 + 1 + 2), q.next(1000), "the owner of a chain alone, first");
        assertEquals(new FirstSyncBatches.Batch(List.of(a, b), 80), q.next(100));
        assertEquals(new FirstSyncBatches.Batch(List.of(c), 40), q.next(10), "one service at least, however small the limit");
        assertFalse(q.hasNext());
    }

    /**
     * A transaction's size follows the kernel's time per object for 20 ms: it shrinks at once when
     * the kernel is slower, grows by half at most when faster, and stays between a sixteenth of
     * the configured count and the count.
     */
    @Test
    void theKernelsPaceSizesTheNextTransaction() {
        KernelPace pace = new KernelPace(4096);
        assertEquals(4096, pace.limit(), "the configured count first");
        pace.observe(4096, 60_000_000L);
        assertEquals(1365, pace.limit(), "60 ms for 4,096: a third of it for 20 ms");
        pace.observe(1365, 10_000_000L);
        assertEquals(2047, pace.limit(), "twice as fast: by half only");
        pace.observe(2047, 1_000_000L);
        pace.observe(3070, 1_000_000L);
        assertEquals(4096, pace.limit(), "never past the configured count");
        pace.observe(4096, 2_000_000_000L);
        assertEquals(256, pace.limit(), "never under a sixteenth of it");
        pace.observe(0, 5_000_000L);
        pace.observe(100, 0);
        assertEquals(256, pace.limit(), "nothing learnt from an empty batch or an untimed commit");
    }

    @Test
    void theGlobalsAreCutInOrderWithTheBaseChainsRulesLastOrHeldBack() {
        Table t = new Table(Family.IP, "t");
        Chain base = Chain.base(Family.IP, "t", "nat-prerouting", "nat", Hook.PREROUTING, -100);
        Chain services = Chain.regular(Family.IP, "t", "services");
        NftSet set = NftSet.set(Family.IP, "t", "s", DataType.INTEGER);
        List<SetElement> els = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            els.add(SetElement.of(Bytes.host32(i)));
        }
        Rule jump = Rule.of(Family.IP, "t", "nat-prerouting", List.of(Immediate.verdict(Verdict.jump("services"))));
        Rule accept = Rule.of(Family.IP, "t", "services", List.of(Immediate.verdict(Verdict.ACCEPT)));
        Transaction tx = new Transaction().add(t).add(set).add(base).add(services).add(jump).add(accept)
                .add(new Elements(Family.IP, "t", "s", els));

        List<Transaction> cut = FirstSyncBatches.globals(tx, 4, true);
        // table, set, base chain, chain | rule | 4 elements | 4 elements | 2 elements | the base chain's rule
        assertEquals(List.of(4, 1, 1, 1, 1, 1), cut.stream().map(Transaction::size).toList());
        assertEquals(List.of(jump), cut.get(5).ops().stream().map(Op::object).toList(), "the base chain's rule last");
        List<SetElement> sent = new ArrayList<>();
        cut.forEach(c -> c.ops().forEach(op -> {
            if (op.object() instanceof Elements e) {
                sent.addAll(e.elements());
            }
        }));
        assertEquals(els, sent, "every element once, in order");

        List<Transaction> beside = FirstSyncBatches.globals(tx, 4, false);
        assertEquals(cut.subList(0, 5).toString(), beside.toString(), "without the base chains' rules: held back");
    }

    @Test
    void aRuleOfTheGlobalsWeighsMoreThanAnElementAChainOrASet() {
        Chain services = Chain.regular(Family.IP, "t", "services");
        Transaction tx = new Transaction().add(services);
        for (int i = 0; i < 5; i++) {
            tx.add(Rule.of(Family.IP, "t", "services", List.of(Immediate.verdict(Verdict.ACCEPT))));
        }
        int limit = 2 * FirstSyncBatches.RULE_WEIGHT + 1;
        // The chain and two rules, then two rules, then the last: the chain weighs one, a rule RULE_WEIGHT.
        assertEquals(List.of(3, 2, 1), FirstSyncBatches.globals(tx, limit, true).stream().map(Transaction::size).toList());
    }
}
