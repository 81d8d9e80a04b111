package io.nftproxy.netlink.nft.print;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NftSyntax;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Formats register and element values the way nft writes them, so that nft -f reads them back. */
public final class ValueFormat {
    /** How the bytes of a value are to be read. */
    public enum Kind {
        IPV4, IPV6, PORT, PROTO, MARK, HOST_INT, BE_INT, CT_STATE, CT_STATUS, FIB_ADDRTYPE, NFPROTO, IFNAME, RAW
    }

    private static final String[] CT_STATE_BITS = {"invalid", "established", "related", "new", null, null, "untracked"};
    private static final String[] CT_STATUS_BITS = {"expected", "seen-reply", "assured", "confirmed", "snat", "dnat",
        "dying"};
    private static final String[] ADDR_TYPES = {"unspec", "unicast", "local", "broadcast", "anycast", "multicast",
        "blackhole", "unreachable", "prohibit"};

    private ValueFormat() {
    }

    public static String format(Kind kind, Bytes b) {
        switch (kind) {
            case IPV4:
                if (b.length() == 4) {
                    return b.toInet().getHostAddress();
                }
                break;
            case IPV6:
                if (b.length() == 16) {
                    return Inet.format(b.toInet());
                }
                break;
            case PORT:
                if (b.length() == 2) {
                    return Integer.toString(b.be16At(0));
                }
                break;
            case PROTO:
                if (b.length() == 1) {
                    return protocol(b.get(0));
                }
                break;
            case MARK:
                if (b.length() == 4) {
                    return String.format("0x%08x", b.host32At(0));
                }
                break;
            case HOST_INT:
                if (b.length() == 4) {
                    return Integer.toUnsignedString(b.host32At(0));
                }
                break;
            case BE_INT:
                if (b.length() == 4) {
                    return Integer.toUnsignedString(b.be32At(0));
                }
                break;
            case CT_STATE:
                if (b.length() == 4) {
                    return bits(b.host32At(0), CT_STATE_BITS);
                }
                break;
            case CT_STATUS:
                if (b.length() == 4) {
                    return bits(b.host32At(0), CT_STATUS_BITS);
                }
                break;
            case FIB_ADDRTYPE:
                if (b.length() == 4) {
                    int t = b.host32At(0);
                    return t >= 0 && t < ADDR_TYPES.length ? ADDR_TYPES[t] : Integer.toString(t);
                }
                break;
            case NFPROTO:
                if (b.length() == 1) {
                    return b.get(0) == 2 ? "ipv4" : b.get(0) == 10 ? "ipv6" : Integer.toString(b.get(0));
                }
                break;
            case IFNAME:
                return NftSyntax.quoteString(ifname(b));
            default:
                break;
        }
        return b.toString();
    }

    public static String protocol(int p) {
        return switch (p) {
            case 1 -> "icmp";
            case 6 -> "tcp";
            case 17 -> "udp";
            case 58 -> "ipv6-icmp";
            case 132 -> "sctp";
            default -> Integer.toString(p);
        };
    }

    private static String ifname(Bytes b) {
        byte[] a = b.toArray();
        int n = 0;
        while (n < a.length && a[n] != 0) {
            n++;
        }
        return new String(a, 0, n, StandardCharsets.UTF_8);
    }

    private static String bits(int v, String[] names) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            if ((v & (1 << i)) != 0) {
                out.add(i < names.length && names[i] != null ? names[i] : String.format("0x%x", 1 << i));
            }
        }
        return out.isEmpty() ? "0x0" : String.join(",", out);
    }

    /** The value kind of a set datatype. */
    public static Kind kindOf(DataType t) {
        return switch (t.id()) {
            case 7 -> Kind.IPV4;
            case 8 -> Kind.IPV6;
            case 12 -> Kind.PROTO;
            case 13 -> Kind.PORT;
            case 19 -> Kind.MARK;
            case 41 -> Kind.IFNAME;
            case 4 -> Kind.HOST_INT;
            default -> Kind.RAW;
        };
    }

    /** A map's data value: one field, or a concatenation split by its fields. */
    public static String data(DataType type, Bytes b) {
        List<DataType> fields = type.fields();
        return fields.size() == 1 ? format(kindOf(fields.get(0)), b) : key(fields, b);
    }

    /** A set key: its fields split (each padded to 4 bytes when concatenated) and joined with " . ". */
    public static String key(List<DataType> fields, Bytes key) {
        if (fields.size() == 1) {
            return format(kindOf(fields.get(0)), key);
        }
        StringBuilder sb = new StringBuilder();
        int off = 0;
        for (DataType f : fields) {
            if (sb.length() > 0) {
                sb.append(" . ");
            }
            int end = Math.min(key.length(), off + f.length());
            sb.append(format(kindOf(f), key.slice(off, end)));
            off += (f.length() + 3) & ~3;
        }
        return sb.toString();
    }

    /** A concatenation's range element: each field its value, or "first-last" where they differ. */
    public static String keyRange(List<DataType> fields, Bytes start, Bytes end) {
        StringBuilder sb = new StringBuilder();
        int off = 0;
        for (DataType f : fields) {
            if (sb.length() > 0) {
                sb.append(" . ");
            }
            int to = off + f.length();
            String first = format(kindOf(f), start.slice(off, to));
            String last = format(kindOf(f), end.slice(off, to));
            sb.append(first.equals(last) ? first : first + "-" + last);
            off += (f.length() + 3) & ~3;
        }
        return sb.toString();
    }

    /** A duration in nft's syntax. */
    public static String duration(long ms) {
        if (ms % 1000 == 0) {
            return (ms / 1000) + "s";
        }
        return ms + "ms";
    }
}
