package io.nftproxy.netlink.nft.client;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.CountedElement;
import io.nftproxy.netlink.nft.CounterReader;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftKernel;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.TransactionException;
import io.nftproxy.netlink.nft.wire.NftCodec;
import static io.nftproxy.netlink.nft.NfTablesUapi.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import io.nftproxy.ffi.Errno;
import io.nftproxy.ffi.NativeException;
import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.ffi.NetlinkSocket;
import io.nftproxy.netlink.msg.DumpReader;
import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.msg.Netlink;
import io.nftproxy.netlink.msg.NlError;
import io.nftproxy.netlink.msg.NlMessage;

/**
 * Talks nf_tables to the kernel over one NETLINK_NETFILTER socket: commits transactions as
 * atomic batches, dumps objects back into the model, reads the generation id. Not thread-safe.
 */
public final class NftClient implements NftKernel, CounterReader, AutoCloseable {
    private static final int MIN_SOCKET_BUFFER = 4 << 20;
    private static final int MAX_SOCKET_BUFFER = 1 << 30;
    private static final int RECEIVE_BUFFER = 1 << 20;
    private static final int DUMP_RETRIES = 10;

    private final NetlinkSocket socket;
    private final MessageWriter writer = new MessageWriter(1 << 16);
    private final ByteBuffer rx = ByteBuffer.allocateDirect(RECEIVE_BUFFER).order(ByteOrder.nativeOrder());
    private int sendBuffer;
    private int receiveBuffer;

    private NftClient(NetlinkSocket socket) throws NativeException {
        this.socket = socket;
        // The kernel runs a batch inside sendmsg, so replies are queued by the time it returns; the
        // timeout only guards against a reply that never comes.
        socket.setReceiveTimeout(Duration.ofSeconds(120));
        resizeBuffers(MIN_SOCKET_BUFFER, MIN_SOCKET_BUFFER);
    }

    /** A client for the caller's network namespace. */
    public static NftClient open() throws NftException {
        return open(null);
    }

    /** A client for the given network namespace (null: the caller's). */
    public static NftClient open(NetNamespace ns) throws NftException {
        NetlinkSocket s = null;
        try {
            s = NetlinkSocket.open(NetlinkSocket.NETLINK_NETFILTER, ns);
            return new NftClient(s);
        } catch (NativeException e) {
            if (s != null) {
                s.close();
            }
            throw new NftException("opening nf_tables netlink socket" + (ns == null ? "" : " in " + ns), e);
        }
    }

    private void resizeBuffers(int send, int receive) throws NativeException {
        if (send > sendBuffer || receive > receiveBuffer) {
            sendBuffer = Math.max(send, sendBuffer);
            receiveBuffer = Math.max(receive, receiveBuffer);
            socket.setBufferSizes(sendBuffer, receiveBuffer);
        }
    }

    /** Our socket's port id: the kernel's change events carry it for the changes we made. */
    public int portId() {
        return socket.portId();
    }

    // ------------------------------------------------------------------ commit

    /**
     * Sends the transaction as one batch and waits for the kernel's verdict. On success every
     * operation is applied; on failure none is, and the exception names the failing operation.
     */
    public CommitStats commit(Transaction tx) throws NftException {
        if (tx.isEmpty()) {
            return CommitStats.EMPTY;
        }
        long t0 = System.nanoTime();
        List<Op> ops = tx.ops();
        writer.reset();
        int begin = socket.nextSequence();
        writeBatchMarker(Netlink.NFNL_MSG_BATCH_BEGIN, begin);
        BatchSequences seqs = new BatchSequences(begin + 1);
        for (int i = 0; i < ops.size(); i++) {
            final int opIndex = i;
            NftCodec.encode(writer, ops.get(i), () -> seqs.next(opIndex),
                    i == ops.size() - 1 ? Netlink.NLM_F_ACK : 0);
        }
        int messages = seqs.messages();
        int lastSeq = seqs.last();
        int end = lastSeq + 1;
        writeBatchMarker(Netlink.NFNL_MSG_BATCH_END, end);
        socket.skipSequencesTo(end);
        ByteBuffer batch = writer.finish();
        long t1 = System.nanoTime();
        try {
            int bytes = batch.limit();
            resizeBuffers(Math.min(MAX_SOCKET_BUFFER, bytes + (1 << 20)),
                    Math.min(MAX_SOCKET_BUFFER, Math.max(MIN_SOCKET_BUFFER, messages * 128)));
            drain();
            socket.send(batch);
            List<TransactionException.Failure> failures = new ArrayList<>();
            boolean done = false;
            while (!done) {
                if (!socket.receive(rx, true)) {
                    throw new NftException("no reply from the kernel to a batch of " + messages + " messages",
                            Errno.EAGAIN, null);
                }
                for (NlMessage m : NlMessage.split(rx)) {
                    if (!m.isError()) {
                        continue;
                    }
                    NlError e = m.error();
                    if (e.seq() == lastSeq && e.isAck()) {
                        done = true;
                    } else if (!e.isAck()) {
                        int op = seqs.operation(e.seq());
                        if (op >= 0) {
                            failures.add(new TransactionException.Failure(op, ops.get(op), e.errno(),
                                    e.extAckMessage()));
                            if (e.seq() == lastSeq) {
                                done = true;
                            }
                        } else if (e.seq() == begin) {
                            // The batch was refused whole (no CAP_NET_ADMIN, say): nothing else will come.
                            failures.add(new TransactionException.Failure(-1, null, e.errno(), e.extAckMessage()));
                            done = true;
                        }
                    }
                }
            }
            long t2 = System.nanoTime();
            if (!failures.isEmpty()) {
                throw new TransactionException(failures, ops.size());
            }
            return new CommitStats(ops.size(), messages, bytes, t1 - t0, t2 - t1);
        } catch (NativeException e) {
            if (e.errno() == Errno.ENOBUFS) {
                throw new NftException("the kernel's replies to a batch of " + messages
                        + " messages overflowed the receive buffer; the batch was "
                        + "likely rejected: retry with a full sync", e);
            }
            throw new NftException("committing " + ops.size() + " operations", e);
        }
    }

    private void writeBatchMarker(int type, int seq) {
        writer.beginMessage(type, Netlink.NLM_F_REQUEST, seq);
        writer.nfgenmsg(0, Netlink.NFNL_SUBSYS_NFTABLES);
        writer.endMessage();
    }

    /** Discards anything left queued (a late reply of an earlier request) before a new request. */
    private void drain() throws NativeException {
        while (socket.receive(rx, false)) {
            // discard
        }
    }

    // ------------------------------------------------------------------ dumps

    public List<Table> listTables(Family family) throws NftException {
        return dump(NFT_MSG_GETTABLE, family, null, null, NFT_MSG_NEWTABLE, NftCodec::decodeTable);
    }

    @Override
    public List<Chain> listChains(Family family, String table) throws NftException {
        List<Chain> all = dump(NFT_MSG_GETCHAIN, family, table, null, NFT_MSG_NEWCHAIN, NftCodec::decodeChain);
        return table == null ? all : all.stream().filter(c -> c.table().equals(table)).toList();
    }

    /** Rules of a table, or of one chain of it when {@code chain} is not null; in chain order. */
    @Override
    public List<Rule> listRules(Family family, String table, String chain) throws NftException {
        return dump(NFT_MSG_GETRULE, family, table, chain, NFT_MSG_NEWRULE, NftCodec::decodeRule);
    }

    @Override
    public List<NftSet> listSets(Family family, String table) throws NftException {
        return dump(NFT_MSG_GETSET, family, table, null, NFT_MSG_NEWSET, NftCodec::decodeSet);
    }

    /** Every element of the set, read as {@link #settledElements} reads them. */
    @Override
    public List<SetElement> listElements(Family family, String table, String set) throws NftException {
        return settledElements(family, table, set, m -> NftCodec.decodeElements(m).elements(),
                SetElement::withoutExpiry, -1);
    }

    /** Every element of the set with its counter, read as {@link #settledElements} reads them. */
    @Override
    public List<CountedElement> countedElements(Family family, String table, String set) throws NftException {
        return countedElements(family, table, set, -1);
    }

    /** As {@link #countedElements(Family, String, String)}; {@code expected} spares the second read (see {@link #settledElements}). */
    @Override
    public List<CountedElement> countedElements(Family family, String table, String set, int expected) throws NftException {
        return settledElements(family, table, set, NftCodec::decodeCountedElements, CountedElement::key, expected);
    }

    /**
     * The elements of a set, in dumps until one can be trusted. The kernel fills a dump's messages
     * one at a time and walks the set again from its start for each, skipping as many elements as
     * it sent; a hash set whose table the kernel resizes between two messages (its deferred worker
     * grows or shrinks the table after a commit; the kernel marks an element dump interrupted
     * neither for that nor for a commit) is walked in another order, and the dump holds some
     * elements twice and misses as many ({@code ElementDumpKernelTest}: 27,000 entries read with
     * 24,579 distinct, right after the set grew past 24,576). A dump in one message, or one
     * without a repeated element that holds the {@code expected} count, is taken at once;
     * otherwise the set is read again until two dumps without a repeat hold the same elements
     * ({@code identity}: what must agree, counters and timeouts move on). A resize takes
     * milliseconds, so a second read nearly always agrees.
     */
    private <E> List<E> settledElements(Family family, String table, String set, Function<NlMessage, List<E>> decode,
                                        Function<E, Object> identity, int expected) throws NftException {
        Set<Object> previous = null;
        for (int attempt = 0; ; attempt++) {
            List<List<E>> parts = dump(NFT_MSG_GETSETELEM, family, table, set, NFT_MSG_NEWSETELEM, decode);
            List<E> out = new ArrayList<>();
            for (List<E> part : parts) {
                out.addAll(part);
            }
            if (parts.size() <= 1) {
                return out;
            }
            Set<Object> seen = new HashSet<>(out.size() * 2);
            for (E e : out) {
                seen.add(identity.apply(e));
            }
            boolean noRepeat = seen.size() == out.size();
            if (noRepeat && (out.size() == expected || seen.equals(previous))) {
                return out;
            }
            previous = noRepeat ? seen : null;
            if (attempt >= DUMP_RETRIES) {
                throw new NftException("listing elements of table " + table + " " + set + ": read " + (attempt + 1)
                        + " times, no two readings agreed (the set changed shape while read)", Errno.EINTR, null);
            }
        }
    }

    /**
     * The elements of {@code set} with these keys and their counters, looked up one by one by the
     * kernel ({@value #KEYS_PER_GET} keys a request): no walk of the set, so the cost grows with
     * the keys asked, where a dump restarts its walk for every message it fills. A key the set
     * does not hold (a sync took it out since the keys were taken) is left out: the kernel ends a
     * request at the first such key, after answering those before it, so the request goes on
     * from the key after it. ENOENT when the table or the set does not exist.
     */
    @Override
    public List<CountedElement> countedElements(Family family, String table, String set, List<Bytes> keys) throws NftException {
        String what = "reading " + keys.size() + " elements of " + table + " " + set;
        List<CountedElement> out = new ArrayList<>(keys.size());
        try {
            int from = 0;
            while (from < keys.size()) {
                int to = Math.min(keys.size(), from + KEYS_PER_GET);
                drain();
                writer.reset();
                int seq = socket.nextSequence();
                int listOffset = NftCodec.encodeElementGet(writer, family, table, set, keys.subList(from, to), seq);
                socket.send(writer.finish());
                int before = out.size();
                DumpReader.End end = DumpReader.read(socket, rx, seq, m -> {
                    if (m.nfMsgType() == NFT_MSG_NEWSETELEM) {
                        out.addAll(NftCodec.decoding(m, NftCodec::decodeCountedElements));
                    }
                });
                if (end.timedOut()) {
                    throw new NftException(what + ": no reply", Errno.EAGAIN, null);
                }
                int answered = out.size() - before;
                if (end.error() != null) {
                    boolean missingKey = end.error().errno() == Errno.ENOENT && end.error().attributeOffset() > listOffset
                            && from + answered < to;
                    if (!missingKey) {
                        throw new NftException(what, end.error().errno(), end.error().extAckMessage());
                    }
                    from += answered + 1;
                } else {
                    from = to;
                }
            }
            return out;
        } catch (NativeException e) {
            throw new NftException(what, e);
        }
    }

    /** Keys per keyed element request: its answers (one message each, about 100 bytes) fit the receive buffer many times over. */
    static final int KEYS_PER_GET = 512;

    /** Reads a whole table. Costly for big tables (the kernel's chain dump is quadratic): not for the sync path. */
    public TableContents readTable(Family family, String table) throws NftException {
        Table t = listTables(family).stream().filter(x -> x.name().equals(table)).findFirst()
                .orElseThrow(() -> new NftException("table " + family.keyword() + " " + table, Errno.ENOENT, null));
        List<NftSet> sets = listSets(family, table);
        Map<String, List<SetElement>> elements = new LinkedHashMap<>();
        for (NftSet s : sets) {
            elements.put(s.name(), listElements(family, table, s.name()));
        }
        return new TableContents(t, listChains(family, table), sets, elements, listRules(family, table, null));
    }

    /** Whether the table exists. */
    public boolean hasTable(Family family, String table) throws NftException {
        return listTables(family).stream().anyMatch(t -> t.name().equals(table));
    }

    /** The ruleset generation id; it changes with every successful commit by anyone. */
    public long generation() throws NftException {
        try {
            drain();
            writer.reset();
            int seq = socket.nextSequence();
            writer.beginMessage(NftCodec.type(NFT_MSG_GETGEN), Netlink.NLM_F_REQUEST, seq);
            writer.nfgenmsg(0, 0);
            writer.endMessage();
            socket.send(writer.finish());
            while (true) {
                if (!socket.receive(rx, true)) {
                    throw new NftException("no reply to GETGEN", Errno.EAGAIN, null);
                }
                for (NlMessage m : NlMessage.split(rx)) {
                    if (m.seq() != seq) {
                        continue;
                    }
                    if (m.isError()) {
                        throw new NftException("reading the generation id", m.error().errno(),
                                m.error().extAckMessage());
                    }
                    if (m.nfMsgType() == NFT_MSG_NEWGEN) {
                        return m.nfAttrs().be32(NFTA_GEN_ID, 0) & 0xffffffffL;
                    }
                }
            }
        } catch (NativeException e) {
            throw new NftException("reading the generation id", e);
        }
    }

    private <T> List<T> dump(int getMsg, Family family, String table, String name, int replyMsg,
                             Function<NlMessage, T> decode) throws NftException {
        String what = "listing " + describeDump(getMsg) + (table == null ? "" : " of table " + table)
                + (name == null ? "" : " " + name);
        try {
            List<T> previous = null;
            for (int attempt = 0; ; attempt++) {
                drain();
                writer.reset();
                int seq = socket.nextSequence();
                NftCodec.encodeDump(writer, getMsg, family, table, name, seq);
                socket.send(writer.finish());
                List<T> out = new ArrayList<>();
                DumpReader.End end = DumpReader.read(socket, rx, seq, m -> {
                    if (m.nfMsgType() == replyMsg) {
                        T v = NftCodec.decoding(m, decode);
                        if (family == null || family.code() == m.nfFamily()) {
                            out.add(v);
                        }
                    }
                });
                if (end.timedOut()) {
                    throw new NftException(what + ": no reply", Errno.EAGAIN, null);
                }
                if (end.error() != null) {
                    throw new NftException(what, end.error().errno(), end.error().extAckMessage());
                }
                // A dump interrupted by a concurrent commit may be inconsistent: read it again, and
                // never hand out one that stayed inconsistent. Any commit in the network namespace
                // interrupts a dump of any table, and another nftables user committing every few
                // milliseconds interrupts every dump longer than that (1,293 chains at 10,000
                // services: 41 ms); two reads in a row that agree saw what was there, unchanged.
                if (!end.interrupted() || out.equals(previous)) {
                    return out;
                }
                previous = out;
                if (attempt >= DUMP_RETRIES) {
                    throw new NftException(what + ": interrupted by concurrent commits " + (attempt + 1) + " times in a row;"
                            + " what it read may be inconsistent", Errno.EINTR, null);
                }
            }
        } catch (NativeException e) {
            throw new NftException(what, e);
        }
    }

    private static String describeDump(int getMsg) {
        return switch (getMsg) {
            case NFT_MSG_GETTABLE -> "tables";
            case NFT_MSG_GETCHAIN -> "chains";
            case NFT_MSG_GETRULE -> "rules";
            case NFT_MSG_GETSET -> "sets";
            case NFT_MSG_GETSETELEM -> "elements";
            default -> "objects";
        };
    }

    @Override
    public void close() {
        socket.close();
    }
}
