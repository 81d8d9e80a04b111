package io.nftproxy.netlink.nft.monitor;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.NftEvent;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.wire.NftCodec;
import static io.nftproxy.netlink.nft.NfTablesUapi.*;

import java.time.Duration;

import io.nftproxy.ffi.NativeException;
import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.msg.Netlink;
import io.nftproxy.netlink.msg.NlMessage;

/**
 * Subscribes to NFNLGRP_NFTABLES and decodes the kernel's change events: whoever commits (nft,
 * another proxy, an operator), we see which table, chain or set changed.
 */
public final class NftMonitor implements AutoCloseable {
    private final GroupReader<NftEvent> events;

    private NftMonitor(GroupReader<NftEvent> events) {
        this.events = events;
    }

    public static NftMonitor open(NetNamespace ns) throws NftException {
        return open(ns, 16 << 20);
    }

    /** With a receive buffer of {@code receiveBytes} (tests overflow a small one on purpose). */
    public static NftMonitor open(NetNamespace ns, int receiveBytes) throws NftException {
        return new NftMonitor(GroupReader.open(ns, Netlink.NFNLGRP_NFTABLES, receiveBytes, NftMonitor::decode, "nf_tables events"));
    }

    /**
     * The next event, waiting up to {@code timeout}; null when none came in time.
     *
     * @throws NftException with errno ENOBUFS when events were lost because we read too slowly
     */
    public NftEvent next(Duration timeout) throws NftException {
        return events.next(timeout);
    }

    /**
     * Stops the kernel from sending us events until {@link #resume()}. While anyone listens, the
     * kernel builds an event for every object a commit touches (at 100k elements it multiplies
     * the commit's kernel time several times), so a listener that can account for its own commits
     * another way pauses during them. Events queued before the pause can still be read.
     */
    public void pause() throws NftException {
        try {
            events.socket().leaveGroup(Netlink.NFNLGRP_NFTABLES);
        } catch (NativeException e) {
            throw new NftException("leaving the nf_tables event group", e);
        }
    }

    /** Receives events again after {@link #pause()}. */
    public void resume() throws NftException {
        try {
            events.socket().joinGroup(Netlink.NFNLGRP_NFTABLES);
        } catch (NativeException e) {
            throw new NftException("joining the nf_tables event group", e);
        }
    }

    /** The event a message announces, null for messages that are not nf_tables events. */
    public static NftEvent decode(NlMessage m) {
        if (m.nfSubsystem() != Netlink.NFNL_SUBSYS_NFTABLES) {
            return null;
        }
        return NftCodec.decoding(m, NftMonitor::decodeEvent);
    }

    private static NftEvent decodeEvent(NlMessage m) {
        int t = m.nfMsgType();
        Family f;
        try {
            f = Family.of(m.nfFamily());
        } catch (IllegalArgumentException e) {
            f = null;
        }
        return switch (t) {
            case NFT_MSG_NEWTABLE, NFT_MSG_DELTABLE ->
                    new NftEvent(NftEvent.Type.TABLE, t == NFT_MSG_DELTABLE, f, NftCodec.decodeTable(m), 0, m.pid());
            case NFT_MSG_NEWCHAIN, NFT_MSG_DELCHAIN ->
                    new NftEvent(NftEvent.Type.CHAIN, t == NFT_MSG_DELCHAIN, f, NftCodec.decodeChain(m), 0, m.pid());
            case NFT_MSG_NEWRULE, NFT_MSG_DELRULE ->
                    new NftEvent(NftEvent.Type.RULE, t == NFT_MSG_DELRULE, f, NftCodec.decodeRule(m), 0, m.pid());
            case NFT_MSG_NEWSET, NFT_MSG_DELSET ->
                    new NftEvent(NftEvent.Type.SET, t == NFT_MSG_DELSET, f, NftCodec.decodeSet(m), 0, m.pid());
            case NFT_MSG_NEWSETELEM, NFT_MSG_DELSETELEM ->
                    new NftEvent(NftEvent.Type.ELEMENTS, t == NFT_MSG_DELSETELEM, f, NftCodec.decodeElements(m), 0,
                            m.pid());
            case NFT_MSG_NEWGEN -> new NftEvent(NftEvent.Type.GENERATION, false, null, null,
                    m.nfAttrs().be32(NFTA_GEN_ID, 0) & 0xffffffffL, m.pid());
            default -> null;
        };
    }

    @Override
    public void close() {
        events.close();
    }
}
