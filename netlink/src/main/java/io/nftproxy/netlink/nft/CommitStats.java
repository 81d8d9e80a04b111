package io.nftproxy.netlink.nft;

/**
 * What one commit cost: operations, netlink messages and bytes sent, the time spent encoding in
 * userspace, and the time inside the kernel (sendmsg, which runs the whole batch synchronously,
 * plus reading the replies).
 */
public record CommitStats(int operations, int messages, long bytes, long encodeNanos, long kernelNanos) {
    public static final CommitStats EMPTY = new CommitStats(0, 0, 0, 0, 0);

    /** The cost of this commit and {@code o} together (a sync sent as several transactions). */
    public CommitStats plus(CommitStats o) {
        return new CommitStats(operations + o.operations, messages + o.messages, bytes + o.bytes,
                encodeNanos + o.encodeNanos, kernelNanos + o.kernelNanos);
    }
}
