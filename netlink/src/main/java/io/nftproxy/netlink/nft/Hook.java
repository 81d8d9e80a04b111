package io.nftproxy.netlink.nft;

/** Netfilter hooks of the ip, ip6 and inet families (enum nf_inet_hooks). */
public enum Hook {
    PREROUTING(0, "prerouting"),
    INPUT(1, "input"),
    FORWARD(2, "forward"),
    OUTPUT(3, "output"),
    POSTROUTING(4, "postrouting");

    private final int code;
    private final String keyword;

    Hook(int code, String keyword) {
        this.code = code;
        this.keyword = keyword;
    }

    public int code() {
        return code;
    }

    public String keyword() {
        return keyword;
    }

    public static Hook of(int code) {
        for (Hook h : values()) {
            if (h.code == code) {
                return h;
            }
        }
        throw new IllegalArgumentException("unknown hook " + code);
    }
}
