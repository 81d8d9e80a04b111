package io.nftproxy.netlink.msg;

import java.nio.ByteBuffer;
import java.util.function.Consumer;

import io.nftproxy.ffi.NativeException;
import io.nftproxy.ffi.NetlinkSocket;

/**
 * Reads the multi-part reply to one dump request: every message carrying the request's sequence
 * number goes to the caller until NLMSG_DONE, an ack or an error ends it. Messages of other
 * sequence numbers (late replies to earlier requests) are skipped.
 */
public final class DumpReader {
    /**
     * How a dump ended: {@code error} is the kernel's error (null when it ended normally),
     * {@code interrupted} whether any part carried NLM_F_DUMP_INTR (a concurrent change made the
     * dump possibly inconsistent), {@code timedOut} whether the socket's receive timeout expired first.
     */
    public record End(NlError error, boolean interrupted, boolean timedOut) {
    }

    private DumpReader() {
    }

    public static End read(NetlinkSocket socket, ByteBuffer rx, int seq, Consumer<NlMessage> each) throws NativeException {
        boolean interrupted = false;
        while (true) {
            if (!socket.receive(rx, true)) {
                return new End(null, interrupted, true);
            }
            for (NlMessage m : NlMessage.split(rx)) {
                if (m.seq() != seq) {
                    continue;
                }
                if ((m.flags() & Netlink.NLM_F_DUMP_INTR) != 0) {
                    interrupted = true;
                }
                if (m.isDone()) {
                    return new End(null, interrupted, false);
                }
                if (m.isError()) {
                    NlError e = m.error();
                    return new End(e.isAck() ? null : e, interrupted, false);
                }
                each.accept(m);
            }
        }
    }
}
