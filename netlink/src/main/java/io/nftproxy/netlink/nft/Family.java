package io.nftproxy.netlink.nft;

/** nf_tables address families (NFPROTO_*), with their nft keyword. */
public enum Family {
    INET(1, "inet"),
    IP(2, "ip"),
    ARP(3, "arp"),
    NETDEV(5, "netdev"),
    BRIDGE(7, "bridge"),
    IP6(10, "ip6");

    private final int code;
    private final String keyword;

    Family(int code, String keyword) {
        this.code = code;
        this.keyword = keyword;
    }

    public int code() {
        return code;
    }

    public String keyword() {
        return keyword;
    }

    public static Family of(int code) {
        for (Family f : values()) {
            if (f.code == code) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown nf_tables family " + code);
    }

    public static Family parse(String keyword) {
        for (Family f : values()) {
            if (f.keyword.equals(keyword)) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown family '" + keyword + "' (expected ip, ip6, inet, arp, bridge or netdev)");
    }
}
