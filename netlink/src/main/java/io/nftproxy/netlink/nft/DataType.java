package io.nftproxy.netlink.nft;

import java.util.ArrayList;
import java.util.List;

/**
 * An nft datatype as nft numbers them (nftables include/datatype.h): the set key and data types
 * the kernel stores for userspace, and that nft uses to print elements.
 */
public record DataType(int id, String name, int length) {
    public static final DataType VERDICT = new DataType(1, "verdict", 4);
    public static final DataType INTEGER = new DataType(4, "integer", 4);
    public static final DataType ETHER_ADDR = new DataType(9, "ether_addr", 6);
    public static final DataType IPV4_ADDR = new DataType(7, "ipv4_addr", 4);
    public static final DataType IPV6_ADDR = new DataType(8, "ipv6_addr", 16);
    public static final DataType INET_PROTO = new DataType(12, "inet_proto", 1);
    public static final DataType INET_SERVICE = new DataType(13, "inet_service", 2);
    public static final DataType MARK = new DataType(19, "mark", 4);
    public static final DataType IFNAME = new DataType(41, "ifname", 16);

    private static final List<DataType> KNOWN =
            List.of(VERDICT, INTEGER, ETHER_ADDR, IPV4_ADDR, IPV6_ADDR, INET_PROTO, INET_SERVICE, MARK, IFNAME);

    /** nft's byte order of the type: 1 host (marks, integers), 2 big endian (addresses, ports). */
    public int byteorder() {
        if (byId(id) == null) {
            return 0; // a concatenation: each field has its own
        }
        return id == MARK.id || id == INTEGER.id ? 1 : id == VERDICT.id ? 0 : 2;
    }

    /** Bits per field in a concatenated type id (TYPE_BITS). */
    public static final int TYPE_BITS = 6;

    public static DataType byId(int id) {
        for (DataType t : KNOWN) {
            if (t.id == id) {
                return t;
            }
        }
        return null;
    }

    public static DataType byName(String name) {
        for (DataType t : KNOWN) {
            if (t.name.equals(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown datatype '" + name + "'");
    }

    /** The type id nft stores for a key of these fields: each field in TYPE_BITS, first field highest. */
    public static int concatId(List<DataType> fields) {
        int id = 0;
        for (DataType t : fields) {
            id = (id << TYPE_BITS) | t.id;
        }
        return id;
    }

    /** Key length: a single field as is; concatenated fields each padded to a 32-bit register. */
    public static int keyLength(List<DataType> fields) {
        if (fields.size() == 1) {
            return fields.get(0).length;
        }
        int n = 0;
        for (DataType t : fields) {
            n += (t.length + 3) & ~3;
        }
        return n;
    }

    /**
     * A concatenation used as map data (e.g. {@code ipv4_addr . inet_service} for DNAT to address
     * and port): the fields' ids packed as for keys, each field padded to a 32-bit register.
     */
    public static DataType concat(List<DataType> fields) {
        if (fields.size() == 1) {
            return fields.get(0);
        }
        List<String> names = new ArrayList<>();
        fields.forEach(f -> names.add(f.name()));
        return new DataType(concatId(fields), String.join(" . ", names), keyLength(fields));
    }

    /** The fields of this type: itself, or those of a concatenation. */
    public List<DataType> fields() {
        return byId(id) != null ? List.of(this) : split(id, length);
    }

    /** Splits a stored type id back into fields; unknown ids stay opaque with the given length. */
    public static List<DataType> split(int id, int keyLen) {
        DataType single = byId(id);
        if (single != null && single.length == keyLen) {
            return List.of(single);
        }
        ArrayList<DataType> out = new ArrayList<>();
        int rest = id;
        while (rest != 0) {
            DataType t = byId(rest & ((1 << TYPE_BITS) - 1));
            if (t == null) {
                return List.of(new DataType(id, "type" + id, keyLen));
            }
            out.add(0, t);
            rest >>>= TYPE_BITS;
        }
        if (out.isEmpty() || keyLength(out) != keyLen) {
            return List.of(new DataType(id, "type" + id, keyLen));
        }
        return List.copyOf(out);
    }
}
