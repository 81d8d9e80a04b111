package io.nftproxy.proxy.iptables;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * kube-proxy's iptables chain names: a prefix and the first 16 characters of the base32 of the
 * SHA-256 of the service port name ("ns/name:port"), the protocol, and for endpoints "ip:port".
 */
public final class ChainNames {
    private ChainNames() {
    }

    /** kube-proxy's ServicePortName string: "namespace/name:port", or "namespace/name" without a port name. */
    public static String servicePortName(ServicePortName id) {
        return id.namespace() + "/" + id.name() + (id.port().isEmpty() ? "" : ":" + id.port());
    }

    static String hash(String s) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return base32(h).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** RFC 4648 base32 with the standard alphabet (what Go's base32.StdEncoding writes). */
    static String base32(byte[] data) {
        final String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
        StringBuilder sb = new StringBuilder();
        int buffer = 0;
        int bits = 0;
        for (byte b : data) {
            buffer = (buffer << 8) | (b & 0xff);
            bits += 8;
            while (bits >= 5) {
                sb.append(alphabet.charAt((buffer >> (bits - 5)) & 31));
                bits -= 5;
            }
        }
        if (bits > 0) {
            sb.append(alphabet.charAt((buffer << (5 - bits)) & 31));
        }
        while (sb.length() % 8 != 0) {
            sb.append('=');
        }
        return sb.toString();
    }

    static String portProto(ServicePortName id) {
        return servicePortName(id) + id.protocol().lower();
    }

    public static String svc(ServicePortName id) {
        return "KUBE-SVC-" + hash(portProto(id));
    }

    public static String svl(ServicePortName id) {
        return "KUBE-SVL-" + hash(portProto(id));
    }

    public static String ext(ServicePortName id) {
        return "KUBE-EXT-" + hash(portProto(id));
    }

    public static String fw(ServicePortName id) {
        return "KUBE-FW-" + hash(portProto(id));
    }

    public static String sep(ServicePortName id, Endpoint e) {
        return "KUBE-SEP-" + hash(portProto(id) + e.hostPort());
    }

}
