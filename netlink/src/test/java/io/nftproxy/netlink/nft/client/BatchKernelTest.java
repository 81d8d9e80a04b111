package io.nftproxy.netlink.nft.client;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.TransactionException;
import io.nftproxy.netlink.nft.Verdict;
import static io.nftproxy.netlink.nft.NfTablesUapi.NFT_REG_1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.ffi.Errno;
import io.nftproxy.netlink.nft.expr.Cmp;
import io.nftproxy.netlink.nft.expr.Counter;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.netlink.nft.expr.Payload;
import io.nftproxy.testkit.TestNetns;

/** Batches are atomic: a rejected operation leaves the kernel untouched and is named exactly. */
class BatchKernelTest {

    @Test
    void aFailingOperationInTheMiddleOfOneThousandAppliesNothingAndIsNamed() throws Exception {
        Transaction tx = new Transaction().add(new Table(Family.IP, "big"));
        for (int i = 0; tx.size() < 500; i++) {
            tx.add(Chain.regular(Family.IP, "big", "c" + i));
        }
        int bad = tx.size();
        tx.add(Rule.of(Family.IP, "big", "c0", List.of(Immediate.verdict(Verdict.jump("no-such-chain")))));
        for (int i = 0; tx.size() < 1000; i++) {
            tx.add(Rule.of(Family.IP, "big", "c" + (i % 400), List.of(Payload.network(NFT_REG_1, 16, 4),
                    Cmp.eq(NFT_REG_1, Bytes.be32(0x0a000000 + i)), Counter.zero(), Immediate.verdict(Verdict.ACCEPT))));
        }
        try (TestNetns ns = TestNetns.create("nftp-fail"); NftClient c = NftClient.open(ns.ns())) {
            long genBefore = c.generation();
            TransactionException e = assertThrows(TransactionException.class, () -> c.commit(tx));
            assertEquals(bad, e.index());
            assertEquals(Errno.ENOENT, e.errno());
            assertTrue(e.getMessage().contains("operation " + bad + " of 1000"), e.getMessage());
            assertTrue(e.getMessage().contains("add rule ip big c0 jump no-such-chain"), e.getMessage());
            assertEquals(1, e.failures().size(), "only the bad operation is reported");

            assertEquals(List.of(), c.listTables(null), "nothing of the batch was applied");
            assertEquals("", ns.exec("nft", "list", "ruleset").trim(), "nft sees an empty ruleset");
            assertEquals(genBefore, c.generation(), "an aborted batch does not bump the generation");
        }
    }

    @Test
    void eachKindOfRejectionNamesItsOperation() throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-rej"); NftClient c = NftClient.open(ns.ns())) {
            Table t = new Table(Family.IP, "t");
            c.commit(new Transaction().add(t).add(Chain.regular(Family.IP, "t", "c")));

            TransactionException exists = assertThrows(TransactionException.class,
                    () -> c.commit(new Transaction().create(t)));
            assertEquals(Errno.EEXIST, exists.errno());
            assertTrue(exists.isExists() && !exists.isNotFound());
            assertEquals(0, exists.index());

            TransactionException missing = assertThrows(TransactionException.class,
                    () -> c.commit(new Transaction().add(Chain.regular(Family.IP, "t", "d"))
                            .delete(Chain.regular(Family.IP, "t", "nope"))));
            assertEquals(Errno.ENOENT, missing.errno());
            assertTrue(missing.isNotFound() && !missing.isExists() && !missing.isPermissionDenied());
            assertEquals(1, missing.index());
            assertTrue(missing.getMessage().contains("delete chain ip t nope"), missing.getMessage());
            assertEquals(List.of("c"), c.listChains(Family.IP, "t").stream().map(Chain::name).toList(),
                    "the added chain d was rolled back with the failed delete");

            // An element of the wrong key length: the kernel's own validation.
            NftSet s = NftSet.set(Family.IP, "t", "s", DataType.IPV4_ADDR);
            TransactionException badKey = assertThrows(TransactionException.class,
                    () -> c.commit(new Transaction().add(s).add(Elements.of(s, List.of(SetElement.of(Bytes.be16(1)))))));
            assertEquals(1, badKey.index());
            assertTrue(c.listSets(Family.IP, "t").isEmpty(), "the set added in the same batch is gone too");

            // delete of a missing object fails; destroy (Linux 6.3+) does not
            assertThrows(TransactionException.class, () -> c.commit(new Transaction().delete(new Table(Family.IP, "zz"))));
            c.commit(new Transaction().destroy(new Table(Family.IP, "zz")).destroy(Chain.regular(Family.IP, "t", "zz")));
        }
    }

    @Test
    void generationAdvancesOncePerCommit() throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-gen"); NftClient c = NftClient.open(ns.ns())) {
            long g0 = c.generation();
            c.commit(new Transaction().add(new Table(Family.IP, "g")).add(Chain.regular(Family.IP, "g", "a"))
                    .add(Chain.regular(Family.IP, "g", "b")));
            assertEquals(g0 + 1, c.generation());
            ns.nft("add chain ip g c");
            assertEquals(g0 + 2, c.generation(), "commits by others count too");
        }
    }

    @Test
    void flushReplaceInsertAndDeleteByHandle() throws Exception {
        try (TestNetns ns = TestNetns.create("nftp-ops"); NftClient c = NftClient.open(ns.ns())) {
            Chain ch = Chain.regular(Family.IP, "o", "c");
            NftSet s = NftSet.set(Family.IP, "o", "s", DataType.IPV4_ADDR);
            Rule accept = Rule.of(Family.IP, "o", "c", List.of(Immediate.verdict(Verdict.ACCEPT)));
            Rule drop = Rule.of(Family.IP, "o", "c", List.of(Immediate.verdict(Verdict.DROP)));
            Rule ret = Rule.of(Family.IP, "o", "c", List.of(Immediate.verdict(Verdict.RETURN)));
            c.commit(new Transaction().add(new Table(Family.IP, "o")).add(ch).add(s).add(accept).add(drop)
                    .add(Elements.of(s, List.of(SetElement.of(Bytes.ip("1.1.1.1")), SetElement.of(Bytes.ip("2.2.2.2"))))));

            c.commit(new Transaction().insert(ret));
            List<Rule> rules = c.listRules(Family.IP, "o", "c");
            assertEquals(List.of(ret, accept, drop), rules.stream().map(Rule::withoutHandle).toList());

            c.commit(new Transaction().replace(drop.withHandle(rules.get(2).handle()).withComment("was drop"))
                    .delete(rules.get(0)));
            List<Rule> after = c.listRules(Family.IP, "o", "c");
            assertEquals(List.of(accept, drop.withComment("was drop")), after.stream().map(Rule::withoutHandle).toList());
            assertEquals(rules.get(2).handle(), after.get(1).handle(), "replace keeps the handle");

            c.commit(new Transaction().delete(Elements.of(s, List.of(SetElement.of(Bytes.ip("1.1.1.1"))))));
            assertEquals(List.of(SetElement.of(Bytes.ip("2.2.2.2"))), c.listElements(Family.IP, "o", "s"));
            c.commit(new Transaction().flush(s).flush(ch));
            assertEquals(List.of(), c.listElements(Family.IP, "o", "s"));
            assertEquals(List.of(), c.listRules(Family.IP, "o", "c"));
            c.commit(new Transaction().delete(new Table(Family.IP, "o")));
            assertEquals(List.of(), c.listTables(Family.IP));
        }
    }

    @Test
    void twoHundredThousandMessagesCommitInOneBatchAndReadBack() throws Exception {
        int chains = 2_000;
        int rulesPerChain = 99;
        Transaction tx = new Transaction().add(new Table(Family.IP, "huge"));
        for (int i = 0; i < chains; i++) {
            tx.add(Chain.regular(Family.IP, "huge", "c" + i));
        }
        for (int i = 0; i < chains; i++) {
            for (int j = 0; j < rulesPerChain; j++) {
                tx.add(Rule.of(Family.IP, "huge", "c" + i, List.of(Payload.network(NFT_REG_1, 16, 4),
                        Cmp.eq(NFT_REG_1, Bytes.be32(0x0a000000 + i * 256 + j)), Immediate.verdict(Verdict.ACCEPT))));
            }
        }
        NftSet big = NftSet.set(Family.IP, "huge", "big", DataType.IPV4_ADDR);
        List<SetElement> els = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            els.add(SetElement.of(Bytes.be32(0x0b000000 + i)));
        }
        tx.add(big).add(Elements.of(big, els));
        try (TestNetns ns = TestNetns.create("nftp-huge"); NftClient c = NftClient.open(ns.ns())) {
            CommitStats st = c.commit(tx);
            assertTrue(st.messages() >= 200_000, "messages: " + st.messages());
            assertEquals(chains, c.listChains(Family.IP, "huge").size());
            List<Rule> rules = c.listRules(Family.IP, "huge", null);
            assertEquals(chains * rulesPerChain, rules.size());
            assertEquals(tx.ops().get(1 + chains + 12_345).object(), rules.get(12_345).withoutHandle());
            assertEquals(20_000, c.listElements(Family.IP, "huge", "big").size());
            // the witness agrees on the count
            String chain7 = ns.exec("nft", "list", "chain", "ip", "huge", "c7");
            assertEquals(rulesPerChain, chain7.lines().filter(l -> l.contains("accept")).count());
        }
    }
}
