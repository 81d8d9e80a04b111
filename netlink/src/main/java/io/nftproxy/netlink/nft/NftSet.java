package io.nftproxy.netlink.nft;

import java.util.List;
import java.util.Objects;

/**
 * A named set or map. {@code key} lists the fields of the key (more than one: a concatenation such
 * as {@code ipv4_addr . inet_proto . inet_service}); {@code data} is null for a set,
 * {@link DataType#VERDICT} for a verdict map, or a value type for a data map. {@code flags} holds
 * the NFT_SET_* flags the caller chose (interval, timeout, constant, dynamic); the map flag follows
 * from {@code data}. Timeouts are in milliseconds, 0 for none. With {@code counter} every element
 * carries a counter of its own (the set's NFTA_SET_EXPR), which a lookup that matches the element
 * increments: the kernel clones it into each element added without expressions of its own.
 * {@code size} is the most elements the set may hold (NFTA_SET_DESC_SIZE), 0 for none given: the
 * kernel then caps a set it writes itself (a dynamic set) at 65,535 and no other.
 */
public record NftSet(Family family, String table, String name, List<DataType> key, DataType data, int flags,
                     long timeoutMs, String comment, boolean counter, int size) implements NftObject {

    public NftSet {
        Objects.requireNonNull(family, "family");
        NftSyntax.checkName("table", table);
        NftSyntax.checkName("set", name);
        key = List.copyOf(key);
        if (key.isEmpty()) {
            throw new IllegalArgumentException("set " + name + " needs a key type");
        }
        if (timeoutMs > 0) {
            flags |= NfTablesUapi.NFT_SET_TIMEOUT;
        }
        flags &= ~NfTablesUapi.NFT_SET_MAP;
        if (data != null) {
            flags |= NfTablesUapi.NFT_SET_MAP;
        }
        if (size < 0) {
            throw new IllegalArgumentException("set " + name + ": size " + size);
        }
    }

    public NftSet(Family family, String table, String name, List<DataType> key, DataType data, int flags,
                  long timeoutMs, String comment, boolean counter) {
        this(family, table, name, key, data, flags, timeoutMs, comment, counter, 0);
    }

    public NftSet(Family family, String table, String name, List<DataType> key, DataType data, int flags,
                  long timeoutMs, String comment) {
        this(family, table, name, key, data, flags, timeoutMs, comment, false);
    }

    public static NftSet set(Family family, String table, String name, DataType... key) {
        return new NftSet(family, table, name, List.of(key), null, 0, 0, null);
    }

    public static NftSet map(Family family, String table, String name, DataType data, DataType... key) {
        return new NftSet(family, table, name, List.of(key), data, 0, 0, null);
    }

    public NftSet withFlags(int f) {
        return new NftSet(family, table, name, key, data, flags | f, timeoutMs, comment, counter, size);
    }

    public NftSet withTimeout(long ms) {
        return new NftSet(family, table, name, key, data, flags, ms, comment, counter, size);
    }

    public NftSet withComment(String c) {
        return new NftSet(family, table, name, key, data, flags, timeoutMs, c, counter, size);
    }

    /** The same set with (or without) a counter in every element. */
    public NftSet withCounter(boolean on) {
        return new NftSet(family, table, name, key, data, flags, timeoutMs, comment, on, size);
    }

    /** The same set holding at most {@code n} elements. */
    public NftSet withSize(int n) {
        return new NftSet(family, table, name, key, data, flags, timeoutMs, comment, counter, n);
    }

    public boolean isMap() {
        return data != null;
    }

    public boolean isVerdictMap() {
        return DataType.VERDICT.equals(data);
    }

    public int keyLength() {
        return DataType.keyLength(key);
    }

    public boolean has(int flag) {
        return (flags & flag) != 0;
    }

    /**
     * An interval set of concatenations (the kernel's pipapo): each element is whole, a range
     * per field from its key to its key end, rather than a start and an end element as a
     * single-field interval set has.
     */
    public boolean rangeConcat() {
        return has(NfTablesUapi.NFT_SET_INTERVAL) && key.size() > 1;
    }
}
