package io.nftproxy.netlink.nft;

import java.io.IOException;

import io.nftproxy.ffi.Native;

/** The kernel refused a request: errno and, when it gave one, its extended-ack text. */
public class NftException extends IOException {
    private final int errno;
    private final String kernelMessage;

    public NftException(String what, int errno, String kernelMessage) {
        super(what + ": " + Native.strerror(errno) + " (errno " + errno + ")"
                + (kernelMessage == null ? "" : ": " + kernelMessage));
        this.errno = errno;
        this.kernelMessage = kernelMessage;
    }

    public NftException(String what, Throwable cause) {
        super(what + ": " + cause.getMessage(), cause);
        this.errno = cause instanceof io.nftproxy.ffi.NativeException ne ? ne.errno() : 0;
        this.kernelMessage = null;
    }

    public int errno() {
        return errno;
    }

    /** The kernel's extended-ack message, or null. */
    public String kernelMessage() {
        return kernelMessage;
    }
}
