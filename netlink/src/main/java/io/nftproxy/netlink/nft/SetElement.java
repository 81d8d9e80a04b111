package io.nftproxy.netlink.nft;

import java.util.Objects;

/**
 * One element: its key (concatenated fields already laid out, each padded to 4 bytes), an optional
 * interval end, the data of a map (null in a set), a timeout in milliseconds (0: the set's), and the
 * time left before it expires as read back (0 when writing).
 */
public record SetElement(Bytes key, Bytes keyEnd, Data data, long timeoutMs, long expiresMs, int flags) {
    public SetElement {
        Objects.requireNonNull(key, "key");
    }

    public static SetElement of(Bytes key) {
        return new SetElement(key, null, null, 0, 0, 0);
    }

    public static SetElement of(Bytes key, Data data) {
        return new SetElement(key, null, data, 0, 0, 0);
    }

    public SetElement withTimeout(long ms) {
        return new SetElement(key, keyEnd, data, ms, expiresMs, flags);
    }

    /** The element as written: without the kernel's countdown. */
    public SetElement withoutExpiry() {
        return expiresMs == 0 ? this : new SetElement(key, keyEnd, data, timeoutMs, 0, flags);
    }
}
