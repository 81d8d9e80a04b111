package io.nftproxy.netlink.nft;

import java.io.IOException;

import io.nftproxy.ffi.Errno;
import io.nftproxy.ffi.Native;
import io.nftproxy.ffi.NativeException;

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
        this.errno = cause instanceof NativeException ne ? ne.errno() : 0;
        this.kernelMessage = null;
    }

    public int errno() {
        return errno;
    }

    /** The object (table, chain, set, element) does not exist: ENOENT. */
    public boolean isNotFound() {
        return errno == Errno.ENOENT;
    }

    /** The object exists already: EEXIST. */
    public boolean isExists() {
        return errno == Errno.EEXIST;
    }

    /** The process lacks the capability: EPERM or EACCES. */
    public boolean isPermissionDenied() {
        return errno == Errno.EPERM || errno == Errno.EACCES;
    }

    /** The kernel's extended-ack message, or null. */
    public String kernelMessage() {
        return kernelMessage;
    }
}
