package io.nftproxy.ffi;

import java.io.IOException;

/** A failed libc call: what was called, and the errno it left. */
public class NativeException extends IOException {
    private final int errno;

    public NativeException(String call, int errno) {
        super(call + ": " + Native.strerror(errno) + " (errno " + errno + ")");
        this.errno = errno;
    }

    public int errno() {
        return errno;
    }
}
