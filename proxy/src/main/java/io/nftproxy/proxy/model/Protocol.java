package io.nftproxy.proxy.model;

import java.util.Locale;

/** Service protocols kube-proxy programs, with their IP protocol numbers. */
public enum Protocol {
    TCP(6), UDP(17), SCTP(132);

    private final int number;
    private final String lower;

    Protocol(int number) {
        this.number = number;
        this.lower = name().toLowerCase(Locale.ROOT);
    }

    public int number() {
        return number;
    }

    /** "tcp", "udp", "sctp": as kube-proxy's rules and our metrics' labels spell it. */
    public String lower() {
        return lower;
    }

    /** The protocol of an IP protocol number, or null when it is none of these. */
    public static Protocol ofNumber(int n) {
        for (Protocol p : values()) {
            if (p.number == n) {
                return p;
            }
        }
        return null;
    }

    /** Parses a Kubernetes protocol ("TCP", "UDP", "SCTP"; empty means TCP). */
    public static Protocol parse(String s) {
        if (s == null || s.isEmpty()) {
            return TCP;
        }
        for (Protocol p : values()) {
            if (p.name().equals(s)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown protocol '" + s + "' (expected TCP, UDP or SCTP)");
    }
}
