package io.nftproxy.ffi;

import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;

/** Loads libc once and reads errno. The only entry point to foreign code in the project. */
public final class Native {
    private static final LibC LIBC = LibraryLoader.create(LibC.class).load("c");
    private static final Runtime RUNTIME = Runtime.getRuntime(LIBC);

    private Native() {
    }

    public static LibC libc() {
        return LIBC;
    }

    /** errno of the last {@code @SaveError} call made on this thread. */
    public static int errno() {
        return RUNTIME.getLastError();
    }

    public static String strerror(int errno) {
        String s = LIBC.strerror(errno);
        return s == null ? "errno " + errno : s;
    }
}
