package io.nftproxy.netlink.msg;

/**
 * An NLMSG_ERROR reply: errno (0 for an ack), the sequence number of the message it answers, and
 * the extended ack: the kernel's text and the byte offset of the offending attribute within that
 * message (-1 when absent).
 */
public record NlError(int errno, int seq, String extAckMessage, int attributeOffset) {
    public boolean isAck() {
        return errno == 0;
    }
}
