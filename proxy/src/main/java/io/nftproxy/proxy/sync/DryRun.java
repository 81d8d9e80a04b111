package io.nftproxy.proxy.sync;

import java.util.function.Consumer;

import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.wire.NftCodec;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Transaction;

/**
 * A committer that sends nothing: it encodes the transaction into the netlink messages a commit
 * would send (so its figures are real), hands the transaction to a sink (as nft text, say) and
 * reports it accepted. For {@code run --dry-run} and for the build's start-up training run.
 */
public final class DryRun implements Syncer.Committer {
    private final Consumer<Transaction> sink;

    public DryRun(Consumer<Transaction> sink) {
        this.sink = sink;
    }

    @Override
    public CommitStats commit(Transaction tx) {
        long t0 = System.nanoTime();
        MessageWriter w = new MessageWriter(1 << 16);
        int[] seq = {0};
        for (Op op : tx.ops()) {
            NftCodec.encode(w, op, () -> ++seq[0], 0);
        }
        int bytes = w.finish().limit();
        long encode = System.nanoTime() - t0;
        sink.accept(tx);
        return new CommitStats(tx.size(), seq[0], bytes, encode, 0);
    }
}
