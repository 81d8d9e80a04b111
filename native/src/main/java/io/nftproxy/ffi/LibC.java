package io.nftproxy.ffi;

import java.nio.ByteBuffer;

import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.byref.IntByReference;
import jnr.ffi.types.size_t;
import jnr.ffi.types.ssize_t;

/**
 * The libc functions nftproxy calls. Buffers passed here are always direct and read from index 0:
 * callers pass the length explicitly, so jnr-ffi never copies a heap array on the hot path.
 */
public interface LibC {
    @SaveError
    int socket(int domain, int type, int protocol);

    @SaveError
    int bind(int fd, @In ByteBuffer addr, int addrlen);

    @SaveError
    int getsockname(int fd, @Out ByteBuffer addr, IntByReference addrlen);

    @SaveError
    @ssize_t long sendto(int fd, @In ByteBuffer buf, @size_t long len, int flags, @In ByteBuffer destAddr, int addrlen);

    @SaveError
    @ssize_t long recv(int fd, @Out ByteBuffer buf, @size_t long len, int flags);

    @SaveError
    int setsockopt(int fd, int level, int optname, @In ByteBuffer optval, int optlen);

    @SaveError
    int close(int fd);

    @SaveError
    int setns(int fd, int nstype);

    @SaveError
    int open(String path, int flags);

    String strerror(int errnum);
}
