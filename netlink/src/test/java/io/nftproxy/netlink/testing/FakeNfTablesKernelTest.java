package io.nftproxy.netlink.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Hook;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftKernel;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.TransactionException;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.netlink.nft.expr.Lookup;
import io.nftproxy.netlink.nft.expr.Payload;
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * Keeps {@link FakeNfTables} honest: each scenario's transactions go to the kernel (in a fresh
 * network namespace) and to the fake, and after each the two must agree: both accepted with the
 * same table read back, or both refused at the same operation with the same errno.
 */
class FakeNfTablesKernelTest {
    static final Family F = Family.IP;
    static final Table T = new Table(F, "t");
    static final Chain BASE = Chain.base(F, "t", "pre", "nat", Hook.PREROUTING, -100);
    static final Chain C = Chain.regular(F, "t", "c");
    static final Chain D = Chain.regular(F, "t", "d");
    static final NftSet S = NftSet.set(F, "t", "s", DataType.IPV4_ADDR);
    static final NftSet M = NftSet.map(F, "t", "m", DataType.VERDICT, DataType.IPV4_ADDR);
    static final NftSet V = NftSet.map(F, "t", "v", DataType.IPV4_ADDR, DataType.IPV4_ADDR);
    static final NftSet R = NftSet.set(F, "t", "r", DataType.IPV4_ADDR).withFlags(NfTablesUapi.NFT_SET_INTERVAL);

    static Rule jump(Chain from, String to) {
        return Rule.of(F, "t", from.name(), List.of(Immediate.verdict(Verdict.jump(to))));
    }

    static Rule lookup(Chain in, String set) {
        return Rule.of(F, "t", in.name(), List.of(Payload.network(NfTablesUapi.NFT_REG_1, 16, 4), Lookup.member(set, NfTablesUapi.NFT_REG_1),
                Immediate.verdict(Verdict.ACCEPT)));
    }

    static SetElement el(String ip) {
        return SetElement.of(Bytes.ip(ip));
    }

    static SetElement end(String ip) {
        return new SetElement(Bytes.ip(ip), null, null, 0, 0, NfTablesUapi.NFT_SET_ELEM_INTERVAL_END);
    }

    static Transaction tx() {
        return new Transaction();
    }

    static Transaction setup() {
        return tx().add(T).add(BASE).add(C).add(D).add(S).add(M).add(V).add(R);
    }

    static Stream<Arguments> scenarios() {
        return Stream.of(
                Arguments.of("create what exists", List.of(setup(), tx().create(C), tx().create(T), tx().create(S))),
                Arguments.of("delete what does not exist", List.of(setup(), tx().delete(Chain.regular(F, "t", "x")),
                        tx().delete(NftSet.set(F, "t", "x", DataType.IPV4_ADDR)), tx().delete(new Table(F, "x")),
                        tx().destroy(Chain.regular(F, "t", "x")).destroy(new Table(F, "x")))),
                Arguments.of("references to what does not exist", List.of(setup(), tx().add(jump(C, "x")),
                        tx().add(lookup(C, "x")), tx().add(Elements.of(M, List.of(SetElement.of(Bytes.ip("10.0.0.1"), Verdict.jump("x"))))))),
                Arguments.of("what is in use cannot go", List.of(setup(), tx().add(jump(BASE, "c")).add(lookup(D, "s")),
                        tx().delete(C), tx().delete(S), tx().add(Elements.of(M, List.of(SetElement.of(Bytes.ip("10.0.0.1"),
                                Verdict.goTo("d"))))), tx().delete(D))),
                Arguments.of("a chain with rules is deleted with them", List.of(setup(), tx().add(lookup(C, "s")).add(lookup(C, "s")),
                        tx().delete(C), tx().add(C).add(jump(C, "d")).flush(C))),
                Arguments.of("elements that do not fit their set", List.of(setup(),
                        tx().add(Elements.of(S, List.of(SetElement.of(Bytes.ip("fd00::1"))))),
                        tx().add(Elements.of(V, List.of(el("10.0.0.1")))),
                        tx().add(Elements.of(V, List.of(SetElement.of(Bytes.ip("10.0.0.1"), Data.value(Bytes.be16(80)))))),
                        tx().add(Elements.of(M, List.of(SetElement.of(Bytes.ip("10.0.0.1"), Data.value(Bytes.ip("10.0.0.2")))))))),
                Arguments.of("elements added, again, changed, deleted", List.of(setup(),
                        tx().add(Elements.of(S, List.of(el("10.0.0.1"), el("10.0.0.2")))),
                        tx().add(Elements.of(S, List.of(el("10.0.0.1")))),
                        tx().add(Elements.of(V, List.of(SetElement.of(Bytes.ip("10.0.0.1"), Data.value(Bytes.ip("10.0.0.2")))))),
                        tx().add(Elements.of(V, List.of(SetElement.of(Bytes.ip("10.0.0.1"), Data.value(Bytes.ip("10.0.0.3")))))),
                        tx().delete(Elements.of(S, List.of(el("10.0.0.3")))),
                        tx().delete(Elements.of(S, List.of(el("10.0.0.2")))),
                        tx().flush(S))),
                // A comment is kept with the element; the same element again with another comment changes nothing.
                Arguments.of("element comments", List.of(setup(),
                        tx().add(Elements.of(M, List.of(SetElement.of(Bytes.ip("10.0.0.1"), Verdict.goTo("d")).withComment("a/b:c")))),
                        tx().add(Elements.of(M, List.of(SetElement.of(Bytes.ip("10.0.0.1"), Verdict.goTo("d")).withComment("x/y:z")))),
                        tx().delete(Elements.of(M, List.of(SetElement.of(Bytes.ip("10.0.0.1")))))
                                .add(Elements.of(M, List.of(SetElement.of(Bytes.ip("10.0.0.1"), Verdict.goTo("d")).withComment("x/y:z")))))),
                Arguments.of("intervals", List.of(setup(), tx().add(Elements.of(R, List.of(el("10.0.0.0"), end("10.0.1.0")))))),
                // The kernel checks each element against those already there: end before start is an overlap.
                Arguments.of("intervals added end first", List.of(setup(),
                        tx().add(Elements.of(R, List.of(el("10.96.0.0"), end("10.97.0.0")))),
                        tx().add(Elements.of(R, List.of(end("10.99.0.0"), el("10.98.0.0")))),
                        tx().add(Elements.of(R, List.of(el("10.98.0.0"), end("10.99.0.0")))),
                        tx().add(Elements.of(R, List.of(end("10.95.0.0"), el("10.94.0.0")))), // nothing below: accepted
                        tx().add(Elements.of(R, List.of(el("10.99.0.0"), end("10.99.1.0")))), // adjacent: accepted
                        tx().delete(Elements.of(R, List.of(end("10.97.0.0")))).add(Elements.of(R, List.of(end("10.97.2.0")))))),
                Arguments.of("redefinitions", List.of(setup(), tx().add(NftSet.set(F, "t", "s", DataType.IPV6_ADDR)),
                        tx().add(Chain.base(F, "t", "pre", "nat", Hook.PREROUTING, -90)), tx().add(Chain.regular(F, "t", "pre")),
                        tx().add(S).add(C))),
                Arguments.of("all or nothing", List.of(setup(), tx().add(Chain.regular(F, "t", "new")).add(jump(C, "new"))
                        .add(jump(C, "missing")), tx().add(Elements.of(S, List.of(el("10.0.0.9")))).delete(D).delete(C))),
                Arguments.of("the table goes with everything in it", List.of(setup(), tx().add(jump(BASE, "c")).add(lookup(C, "s")),
                        tx().delete(T), tx().add(T))));
    }

    /** "ok" and the table as read back, or the failing operation's index and errno. */
    static String outcome(NftKernel k, Transaction t) throws NftException {
        try {
            k.commit(t);
        } catch (TransactionException e) {
            return "refused: operation " + e.index() + ", errno " + e.errno();
        }
        return "ok\n" + (k.hasTable(F, "t") ? k.readTable(F, "t").toString() : "(no table)");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void theFakeDoesWhatTheKernelDoes(String name, List<Transaction> txs) throws Exception {
        Kernel.require();
        FakeNfTables fake = new FakeNfTables();
        List<String> kernel = new ArrayList<>();
        List<String> faked = new ArrayList<>();
        try (TestNetns ns = TestNetns.create("nftp-fake"); NftClient client = NftClient.open(ns.ns())) {
            for (Transaction t : txs) {
                kernel.add(outcome(client, t));
                faked.add(outcome(fake, t));
            }
        }
        assertEquals(kernel, faked, name);
    }
}
