package io.nftproxy.netlink.ct;

import java.net.InetAddress;

import io.nftproxy.netlink.nft.Inet;

/**
 * One connection the kernel tracks: its original tuple (as the client sent it) and its reply
 * tuple (as the reply comes back: after DNAT the reply's source is the endpoint).
 */
public record ConntrackEntry(int protocol, InetAddress origSrc, InetAddress origDst, int origSport, int origDport,
                             InetAddress replySrc, InetAddress replyDst, int replySport, int replyDport) {

    @Override
    public String toString() {
        return "proto " + protocol + " " + Inet.format(origSrc) + ":" + origSport + " -> " + Inet.format(origDst) + ":"
                + origDport + " (reply from " + Inet.format(replySrc) + ":" + replySport + ")";
    }
}
