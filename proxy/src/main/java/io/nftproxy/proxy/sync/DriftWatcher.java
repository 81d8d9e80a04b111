package io.nftproxy.proxy.sync;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.NftEvent;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.monitor.NftMonitor;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.proxy.render.NftRenderer;

/**
 * Watches the kernel's nf_tables events for changes to our tables made by anyone but us (an
 * operator's nft, another program) and asks for a repair: a sync that replaces our tables whole. We never list
 * our tables to find drift: the events say who changed what.
 */
public final class DriftWatcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DriftWatcher.class);

    private final NftMonitor monitor;
    private final String table;
    private final int ourPortId;
    private final Runnable repair;
    private final Runnable check;
    private final Thread thread;
    private volatile boolean closed;
    private long lastWarnNanos = Long.MIN_VALUE / 2;
    private final AtomicLong eventsRead = new AtomicLong();
    private volatile String lastTable;

    /**
     * @param repair asked for when someone else changed our tables: a rebuild
     * @param check asked for when someone else committed while we did not listen: a re-assertion
     */
    public DriftWatcher(NetNamespace ns, String table, int ourPortId, Runnable repair, Runnable check) throws NftException {
        this(NftMonitor.open(ns), table, ourPortId, repair, check);
    }

    /** Over a given monitor (a test's, with a small buffer to overflow). */
    DriftWatcher(NftMonitor monitor, String table, int ourPortId, Runnable repair, Runnable check) {
        this.monitor = monitor;
        this.table = table;
        this.ourPortId = ourPortId;
        this.repair = repair;
        this.check = check;
        this.thread = new Thread(this::loop, "drift-watcher");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    private void loop() {
        // A foreign transaction is many events (a table deleted: every rule, chain and set), then
        // the kernel's new-generation event that ends it: one repair when that end arrives, so
        // events still being read after the repair has begun do not ask for another.
        boolean driftSeen = false;
        while (!closed) {
            try {
                NftEvent e = monitor.next(Duration.ofSeconds(1));
                if (e == null || e.type() == NftEvent.Type.GENERATION) {
                    if (driftSeen) {
                        driftSeen = false;
                        repair.run();
                    }
                    continue;
                }
                eventsRead.incrementAndGet();
                lastTable = e.table();
                if (!table.equals(e.table()) || e.portId() == ourPortId) {
                    continue;
                }
                if ((e.type() == NftEvent.Type.CHAIN || e.type() == NftEvent.Type.RULE) && NftRenderer.isTraceChain(e.name())) {
                    continue; // nftproxy trace's marking chains come and go in our table: not drift
                }
                if (!driftSeen) {
                    // Said once per foreign change (and at most once a second).
                    long now = System.nanoTime();
                    if (now - lastWarnNanos > 1_000_000_000L) {
                        LOG.warn("our table was changed by someone else ({}); rebuilding our tables", e);
                        lastWarnNanos = now;
                    }
                    driftSeen = true;
                }
            } catch (NftException ex) {
                if (closed) {
                    return;
                }
                // Lost events (buffer overrun) may have hidden a change: repair to be sure.
                LOG.warn("nf_tables events: {}; rebuilding our tables to be sure", ex.getMessage());
                driftSeen = false;
                repair.run();
            }
        }
    }

    /**
     * Commits our own transaction without listening: the kernel then builds no event per element
     * (see {@link NftMonitor#pause()}). A commit by anyone else in that window still shows in the
     * generation id: our commit moves it by one (or not at all when it changed nothing), so a move
     * by more means someone else committed too. That is nearly always another nftables user of
     * the node going about its own tables (a CNI plugin commits for every pod), so it asks for a
     * check, not a rebuild: a re-assertion compares our rules and re-adds our elements in small
     * transactions, where a rebuild's one batch would hold every other user for seconds at
     * tens of thousands of services, and a busy neighbour would cause one after another. (What
     * a re-assertion cannot see is an element or chain someone added to our tables inside that
     * window. A foreign commit beside a commit of ours that changed nothing moves the generation
     * by one and goes unseen here; the hourly full sync re-asserts our rules anyway.)
     */
    public CommitStats commitQuietly(NftClient client, Transaction tx) throws NftException {
        return commitQuietly(client, () -> client.commit(tx));
    }

    /** The same, around any commit through {@code client} (tests put a foreign commit in the window). */
    CommitStats commitQuietly(NftClient client, Commit commit) throws NftException {
        long before = client.generation();
        monitor.pause();
        boolean ok = false;
        try {
            CommitStats stats = commit.run();
            ok = true;
            return stats;
        } finally {
            monitor.resume();
            long after = client.generation();
            long moved = (after - before) & 0xffffffffL;
            if (moved > (ok ? 1 : 0)) {
                LOG.debug("nf_tables changed while we committed (generation {} to {}); checking our rules", before, after);
                check.run();
            }
        }
    }

    /** How many nf_tables object events reached us (ours included, had we listened). */
    long eventsRead() {
        return eventsRead.get();
    }

    /** The table of the last object event read. */
    String lastTable() {
        return lastTable;
    }

    @FunctionalInterface
    interface Commit {
        CommitStats run() throws NftException;
    }

    @Override
    public void close() {
        closed = true;
        monitor.close();
        try {
            thread.join(3000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
