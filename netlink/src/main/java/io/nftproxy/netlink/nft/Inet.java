package io.nftproxy.netlink.nft;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/** Strict parsing and printing of IP address literals: never a DNS lookup. */
public final class Inet {
    private Inet() {
    }

    /** Parses a dotted-quad IPv4 or an IPv6 literal; anything else is rejected with the reason. */
    public static InetAddress parse(String s) {
        if (s == null || s.isEmpty()) {
            throw new IllegalArgumentException("empty IP address");
        }
        if (s.indexOf(':') >= 0) {
            if (!s.matches("[0-9a-fA-F:.]+")) {
                throw new IllegalArgumentException("invalid IPv6 address '" + s + "'");
            }
        } else if (!s.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
            throw new IllegalArgumentException("invalid IPv4 address '" + s + "'");
        } else {
            for (String part : s.split("\\.")) {
                if (Integer.parseInt(part) > 255 || (part.length() > 1 && part.startsWith("0"))) {
                    throw new IllegalArgumentException("invalid IPv4 address '" + s + "'");
                }
            }
        }
        try {
            // Only literals reach here, so this never resolves a name.
            return InetAddress.getByName(s);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("invalid IP address '" + s + "'", e);
        }
    }

    /** The canonical text form: dotted quad, or RFC 5952 compressed IPv6 as nft prints it. */
    public static String format(InetAddress a) {
        if (!(a instanceof Inet6Address)) {
            return a.getHostAddress();
        }
        byte[] b = a.getAddress();
        int[] w = new int[8];
        for (int i = 0; i < 8; i++) {
            w[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        }
        int bestStart = -1;
        int bestLen = 0;
        for (int i = 0; i < 8; ) {
            if (w[i] == 0) {
                int j = i;
                while (j < 8 && w[j] == 0) {
                    j++;
                }
                if (j - i > bestLen && j - i > 1) {
                    bestStart = i;
                    bestLen = j - i;
                }
                i = j;
            } else {
                i++;
            }
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(w[i]));
        }
        return sb.toString();
    }
}
