package io.nftproxy.netlink.nft;

import java.util.Comparator;
import java.util.Objects;

/**
 * One element: its key (concatenated fields already laid out, each padded to 4 bytes), an optional
 * interval end, the data of a map (null in a set), a timeout in milliseconds (0: the set's), the
 * time left before it expires as read back (0 when writing), its flags, and a comment (null for
 * none) that nft lists beside it (kept by the kernel as the element's user data, unread).
 */
public record SetElement(Bytes key, Bytes keyEnd, Data data, long timeoutMs, long expiresMs, int flags, String comment) {
    /**
     * The order of an interval set's elements: by key; at one key, the end of the range below
     * before the start of the range above. The kernel checks each interval element against those
     * already in the set as it arrives, so elements sent in this order never look like an overlap.
     */
    public static final Comparator<SetElement> INTERVAL_ORDER = Comparator.comparing(SetElement::key)
            .thenComparing(e -> !e.isIntervalEnd());

    public SetElement {
        Objects.requireNonNull(key, "key");
    }

    public SetElement(Bytes key, Bytes keyEnd, Data data, long timeoutMs, long expiresMs, int flags) {
        this(key, keyEnd, data, timeoutMs, expiresMs, flags, null);
    }

    /** The end element of an interval set's range (its key is one past the range). */
    public boolean isIntervalEnd() {
        return (flags & NfTablesUapi.NFT_SET_ELEM_INTERVAL_END) != 0;
    }

    public static SetElement of(Bytes key) {
        return new SetElement(key, null, null, 0, 0, 0);
    }

    public static SetElement of(Bytes key, Data data) {
        return new SetElement(key, null, data, 0, 0, 0);
    }

    public SetElement withTimeout(long ms) {
        return new SetElement(key, keyEnd, data, ms, expiresMs, flags, comment);
    }

    public SetElement withComment(String text) {
        return new SetElement(key, keyEnd, data, timeoutMs, expiresMs, flags, text);
    }

    /** The element as written: without the kernel's countdown. */
    public SetElement withoutExpiry() {
        return expiresMs == 0 ? this : new SetElement(key, keyEnd, data, timeoutMs, 0, flags, comment);
    }
}
