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
        if (s.indexOf(':') < 0) {
            // By hand: every endpoint of every slice passes here (a million at 100,000 services),
            // and String.matches compiled a pattern per call: 15% of a 100k one-shot's samples.
            try {
                return InetAddress.getByAddress(ipv4(s));
            } catch (UnknownHostException e) {
                throw new IllegalStateException("four bytes are an IPv4 address", e);
            }
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == ':' || c == '.')) {
                throw new IllegalArgumentException("invalid IPv6 address '" + s + "'");
            }
        }
        try {
            // Only literals reach here, so this never resolves a name.
            return InetAddress.getByName(s);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("invalid IP address '" + s + "'", e);
        }
    }

    /** The four bytes of a dotted quad: each part 1-3 digits, at most 255, no leading zero. */
    private static byte[] ipv4(String s) {
        byte[] out = new byte[4];
        int part = 0;
        int i = 0;
        while (true) {
            int start = i;
            int v = 0;
            while (i < s.length() && i - start < 4 && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                v = v * 10 + (s.charAt(i++) - '0');
            }
            int digits = i - start;
            if (digits == 0 || digits > 3 || v > 255 || (digits > 1 && s.charAt(start) == '0')) {
                throw new IllegalArgumentException("invalid IPv4 address '" + s + "'");
            }
            out[part++] = (byte) v;
            if (part == 4) {
                if (i != s.length()) {
                    throw new IllegalArgumentException("invalid IPv4 address '" + s + "'");
                }
                return out;
            }
            if (i >= s.length() || s.charAt(i) != '.') {
                throw new IllegalArgumentException("invalid IPv4 address '" + s + "'");
            }
            i++;
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
