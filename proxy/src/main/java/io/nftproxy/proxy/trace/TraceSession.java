package io.nftproxy.proxy.trace;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.nftproxy.ffi.Errno;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Hook;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.render.Names;

/**
 * The marking chains of one trace, in our own table: base chains on prerouting and output at
 * priority -300 (before connection tracking and our NAT), whose rules set {@code meta nftrace}
 * on the packets the filter selects. Installed in one transaction, removed in one when closed.
 * The daemon's drift watcher leaves chains named {@value Names#TRACE}* alone.
 */
public final class TraceSession implements AutoCloseable {
    private static final int PRIORITY = -300;
    /** Tells the sessions of one process apart (the process id tells processes apart). */
    private static final AtomicInteger SESSIONS = new AtomicInteger();

    private final NftClient client;
    private final List<Chain> chains;
    private boolean closed;

    private TraceSession(NftClient client, List<Chain> chains) {
        this.client = client;
        this.chains = chains;
    }

    /** Installs the marking chains in {@code table} for each family the filter covers and the table exists in. */
    public static TraceSession open(NftClient client, String table, TraceFilter filter) throws NftException {
        Transaction tx = new Transaction();
        List<Chain> chains = new ArrayList<>();
        String tag = Long.toHexString(ProcessHandle.current().pid()) + "-" + SESSIONS.incrementAndGet();
        for (IpFamily f : IpFamily.values()) {
            Family nf = f.nft();
            if (!filter.covers(f) || !client.hasTable(nf, table)) {
                continue;
            }
            for (Hook hook : List.of(Hook.PREROUTING, Hook.OUTPUT)) {
                String name = Names.traceChain(hook.keyword(), tag);
                Chain c = Chain.base(nf, table, name, "filter", hook, PRIORITY);
                tx.add(c);
                chains.add(c);
                for (List<Expr> r : filter.rules(f)) {
                    tx.add(Rule.of(nf, table, name, r));
                }
            }
        }
        if (chains.isEmpty()) {
            throw new NftException("no table " + table + " to trace in (is nftproxy running here?)",
                    Errno.ENOENT, null);
        }
        client.commit(tx);
        return new TraceSession(client, chains);
    }

    /** The marking chains' names: the first event of every trace is in one of them. */
    public List<String> chainNames() {
        return chains.stream().map(Chain::name).toList();
    }

    /** Removes the marking chains (and their rules); the tracing stops at once. */
    @Override
    public synchronized void close() throws NftException {
        if (closed) {
            return;
        }
        closed = true;
        // Destroy, not delete: a rebuild of our tables by the daemon may have removed them already.
        // A chain goes with its rules.
        Transaction tx = new Transaction();
        for (Chain c : chains) {
            tx.destroy(c);
        }
        try {
            client.commit(tx);
        } catch (NftException e) {
            if (!e.isNotFound()) {
                throw e; // the table itself is gone otherwise: so are the chains
            }
        }
    }
}
