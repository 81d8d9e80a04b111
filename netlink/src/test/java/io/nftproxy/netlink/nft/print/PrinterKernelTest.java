package io.nftproxy.netlink.nft.print;

import io.nftproxy.netlink.nft.Fixture;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.client.NftClient;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.testkit.TestNetns;

/**
 * The printer's output is real nft syntax: what we print of our tables, nft -f loads into a fresh
 * namespace, and reading that back prints the same again.
 */
class PrinterKernelTest {
    @Test
    void printedTablesLoadWithNftAndReadBackTheSame() throws Exception {
        Fixture f = new Fixture();
        try (TestNetns a = TestNetns.create("nftp-pa"); TestNetns b = TestNetns.create("nftp-pb");
             NftClient ca = NftClient.open(a.ns()); NftClient cb = NftClient.open(b.ns())) {
            ca.commit(f.transaction());
            for (Family fam : List.of(Family.IP, Family.IP6, Family.INET)) {
                String printed = ca.readTable(fam, Fixture.T).toString();
                b.nft(printed);
                String reprinted = cb.readTable(fam, Fixture.T).toString();
                assertEquals(printed, reprinted, "nft -f of our printout of " + fam.keyword() + " " + Fixture.T);
            }
        }
    }

    @Test
    void transactionPrintsAsAnNftScriptThatNftAccepts() throws Exception {
        Fixture f = new Fixture();
        Transaction tx = f.transaction();
        String script = tx.toString();
        try (TestNetns a = TestNetns.create("nftp-ta"); TestNetns b = TestNetns.create("nftp-tb");
             NftClient ca = NftClient.open(a.ns()); NftClient cb = NftClient.open(b.ns())) {
            ca.commit(tx);
            b.nft(script);
            for (Family fam : List.of(Family.IP, Family.IP6, Family.INET)) {
                assertEquals(ca.readTable(fam, Fixture.T).toString(), cb.readTable(fam, Fixture.T).toString(),
                        "nft -f of the transaction's script, table " + fam.keyword());
            }
        }
    }
}
