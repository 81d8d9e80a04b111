package io.nftproxy.netlink.msg;

/** Constants of linux/netlink.h and linux/netfilter/nfnetlink.h, named as there. */
public final class Netlink {
    public static final int NLMSG_HDRLEN = 16;
    public static final int NLA_HDRLEN = 4;

    public static final int NLMSG_NOOP = 1;
    public static final int NLMSG_ERROR = 2;
    public static final int NLMSG_DONE = 3;
    public static final int NLMSG_OVERRUN = 4;

    public static final int NLM_F_REQUEST = 0x01;
    public static final int NLM_F_MULTI = 0x02;
    public static final int NLM_F_ACK = 0x04;
    public static final int NLM_F_ECHO = 0x08;
    public static final int NLM_F_DUMP_INTR = 0x10;
    public static final int NLM_F_ROOT = 0x100;
    public static final int NLM_F_MATCH = 0x200;
    public static final int NLM_F_DUMP = NLM_F_ROOT | NLM_F_MATCH;
    public static final int NLM_F_REPLACE = 0x100;
    public static final int NLM_F_EXCL = 0x200;
    public static final int NLM_F_CREATE = 0x400;
    public static final int NLM_F_APPEND = 0x800;
    public static final int NLM_F_CAPPED = 0x100;
    public static final int NLM_F_ACK_TLVS = 0x200;

    public static final int NLA_F_NESTED = 0x8000;
    public static final int NLA_F_NET_BYTEORDER = 0x4000;
    public static final int NLA_TYPE_MASK = ~(NLA_F_NESTED | NLA_F_NET_BYTEORDER) & 0xffff;

    public static final int NLMSGERR_ATTR_MSG = 1;
    public static final int NLMSGERR_ATTR_OFFS = 2;

    public static final int NFNETLINK_V0 = 0;
    public static final int NFNL_SUBSYS_NFTABLES = 10;
    public static final int NFNL_MSG_BATCH_BEGIN = 0x10;
    public static final int NFNL_MSG_BATCH_END = 0x11;
    public static final int NFNLGRP_NFTABLES = 7;
    public static final int NFNLGRP_NFTRACE = 9;
    public static final int NFGENMSG_LEN = 4;

    private Netlink() {
    }

    public static int align(int len) {
        return (len + 3) & ~3;
    }
}
