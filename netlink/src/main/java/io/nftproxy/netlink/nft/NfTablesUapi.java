package io.nftproxy.netlink.nft;


/**
 * Constants of the kernel's user API header linux/netfilter/nf_tables.h (and libnftnl's user data
 * types), named as there (checked against the 6.x headers). Not to be confused with
 * {@link NftKernel} (what a program needs of nf_tables), {@link io.nftproxy.netlink.nft.client.NftClient} (the kernel's, over
 * netlink) or {@link io.nftproxy.netlink.nft.wire.NftCodec} (messages to and from the wire).
 */
public final class NfTablesUapi {
    // enum nf_tables_msg_types
    public static final int NFT_MSG_NEWTABLE = 0;
    public static final int NFT_MSG_GETTABLE = 1;
    public static final int NFT_MSG_DELTABLE = 2;
    public static final int NFT_MSG_NEWCHAIN = 3;
    public static final int NFT_MSG_GETCHAIN = 4;
    public static final int NFT_MSG_DELCHAIN = 5;
    public static final int NFT_MSG_NEWRULE = 6;
    public static final int NFT_MSG_GETRULE = 7;
    public static final int NFT_MSG_DELRULE = 8;
    public static final int NFT_MSG_NEWSET = 9;
    public static final int NFT_MSG_GETSET = 10;
    public static final int NFT_MSG_DELSET = 11;
    public static final int NFT_MSG_NEWSETELEM = 12;
    public static final int NFT_MSG_GETSETELEM = 13;
    public static final int NFT_MSG_DELSETELEM = 14;
    public static final int NFT_MSG_NEWGEN = 15;
    public static final int NFT_MSG_GETGEN = 16;
    public static final int NFT_MSG_TRACE = 17;
    // Linux 6.3+: delete if present, no error if absent.
    public static final int NFT_MSG_DESTROYTABLE = 26;
    public static final int NFT_MSG_DESTROYCHAIN = 27;
    public static final int NFT_MSG_DESTROYRULE = 28;
    public static final int NFT_MSG_DESTROYSET = 29;
    public static final int NFT_MSG_DESTROYSETELEM = 30;

    public static final int NFTA_TABLE_NAME = 1;
    public static final int NFTA_TABLE_FLAGS = 2;
    public static final int NFTA_TABLE_USE = 3;
    public static final int NFTA_TABLE_HANDLE = 4;
    public static final int NFTA_TABLE_USERDATA = 6;
    public static final int NFT_TABLE_F_DORMANT = 1;
    public static final int NFT_TABLE_F_OWNER = 2;

    public static final int NFTA_CHAIN_TABLE = 1;
    public static final int NFTA_CHAIN_HANDLE = 2;
    public static final int NFTA_CHAIN_NAME = 3;
    public static final int NFTA_CHAIN_HOOK = 4;
    public static final int NFTA_CHAIN_POLICY = 5;
    public static final int NFTA_CHAIN_USE = 6;
    public static final int NFTA_CHAIN_TYPE = 7;
    public static final int NFTA_CHAIN_COUNTERS = 8;
    public static final int NFTA_CHAIN_FLAGS = 10;
    public static final int NFTA_CHAIN_ID = 11;
    public static final int NFTA_CHAIN_USERDATA = 12;
    public static final int NFT_CHAIN_BASE = 1;

    public static final int NFTA_HOOK_HOOKNUM = 1;
    public static final int NFTA_HOOK_PRIORITY = 2;
    public static final int NFTA_HOOK_DEV = 3;

    public static final int NFTA_RULE_TABLE = 1;
    public static final int NFTA_RULE_CHAIN = 2;
    public static final int NFTA_RULE_HANDLE = 3;
    public static final int NFTA_RULE_EXPRESSIONS = 4;
    public static final int NFTA_RULE_POSITION = 6;
    public static final int NFTA_RULE_USERDATA = 7;
    public static final int NFTA_RULE_ID = 9;

    public static final int NFTA_LIST_ELEM = 1;
    public static final int NFTA_EXPR_NAME = 1;
    public static final int NFTA_EXPR_DATA = 2;

    public static final int NFTA_SET_TABLE = 1;
    public static final int NFTA_SET_NAME = 2;
    public static final int NFTA_SET_FLAGS = 3;
    public static final int NFTA_SET_KEY_TYPE = 4;
    public static final int NFTA_SET_KEY_LEN = 5;
    public static final int NFTA_SET_DATA_TYPE = 6;
    public static final int NFTA_SET_DATA_LEN = 7;
    public static final int NFTA_SET_POLICY = 8;
    public static final int NFTA_SET_DESC = 9;
    public static final int NFTA_SET_ID = 10;
    public static final int NFTA_SET_TIMEOUT = 11;
    public static final int NFTA_SET_GC_INTERVAL = 12;
    public static final int NFTA_SET_USERDATA = 13;
    public static final int NFTA_SET_HANDLE = 16;
    public static final int NFTA_SET_EXPR = 17;
    public static final int NFTA_SET_EXPRESSIONS = 18;
    public static final int NFTA_SET_DESC_SIZE = 1;
    public static final int NFTA_SET_DESC_CONCAT = 2;
    public static final int NFTA_SET_FIELD_LEN = 1;

    public static final int NFT_SET_ANONYMOUS = 0x1;
    public static final int NFT_SET_CONSTANT = 0x2;
    public static final int NFT_SET_INTERVAL = 0x4;
    public static final int NFT_SET_MAP = 0x8;
    public static final int NFT_SET_TIMEOUT = 0x10;
    public static final int NFT_SET_EVAL = 0x20;
    /** Set by the kernel (and nft) on sets declared with expressions; implied by NFTA_SET_EXPR. */
    public static final int NFT_SET_EXPR = 0x400;
    public static final int NFT_SET_OBJECT = 0x40;
    public static final int NFT_SET_CONCAT = 0x80;

    public static final int NFTA_SET_ELEM_LIST_TABLE = 1;
    public static final int NFTA_SET_ELEM_LIST_SET = 2;
    public static final int NFTA_SET_ELEM_LIST_ELEMENTS = 3;
    public static final int NFTA_SET_ELEM_LIST_SET_ID = 4;

    public static final int NFTA_SET_ELEM_KEY = 1;
    public static final int NFTA_SET_ELEM_DATA = 2;
    public static final int NFTA_SET_ELEM_FLAGS = 3;
    public static final int NFTA_SET_ELEM_TIMEOUT = 4;
    public static final int NFTA_SET_ELEM_EXPIRATION = 5;
    public static final int NFTA_SET_ELEM_USERDATA = 6;
    public static final int NFTA_SET_ELEM_EXPR = 7;
    public static final int NFTA_SET_ELEM_KEY_END = 10;
    public static final int NFTA_SET_ELEM_EXPRESSIONS = 11;
    public static final int NFT_SET_ELEM_INTERVAL_END = 1;

    // enum nft_trace_attributes
    public static final int NFTA_TRACE_TABLE = 1;
    public static final int NFTA_TRACE_CHAIN = 2;
    public static final int NFTA_TRACE_RULE_HANDLE = 3;
    public static final int NFTA_TRACE_TYPE = 4;
    public static final int NFTA_TRACE_VERDICT = 5;
    public static final int NFTA_TRACE_ID = 6;
    public static final int NFTA_TRACE_LL_HEADER = 7;
    public static final int NFTA_TRACE_NETWORK_HEADER = 8;
    public static final int NFTA_TRACE_TRANSPORT_HEADER = 9;
    public static final int NFTA_TRACE_IIF = 10;
    public static final int NFTA_TRACE_IIFTYPE = 11;
    public static final int NFTA_TRACE_OIF = 12;
    public static final int NFTA_TRACE_OIFTYPE = 13;
    public static final int NFTA_TRACE_MARK = 14;
    public static final int NFTA_TRACE_NFPROTO = 15;
    public static final int NFTA_TRACE_POLICY = 16;

    public static final int NFTA_DATA_VALUE = 1;
    public static final int NFTA_DATA_VERDICT = 2;
    public static final int NFTA_VERDICT_CODE = 1;
    public static final int NFTA_VERDICT_CHAIN = 2;

    /** NFTA_SET_DATA_TYPE of a verdict map (enum nft_data_types). */
    public static final int NFT_DATA_VERDICT = 0xffffff00;

    public static final int NFT_CONTINUE = -1;
    public static final int NFT_BREAK = -2;
    public static final int NFT_JUMP = -3;
    public static final int NFT_GOTO = -4;
    public static final int NFT_RETURN = -5;
    public static final int NF_DROP = 0;
    public static final int NF_ACCEPT = 1;
    public static final int NF_QUEUE = 3;

    public static final int NFTA_GEN_ID = 1;

    public static final int NFT_REG_VERDICT = 0;
    public static final int NFT_REG_1 = 1;
    public static final int NFT_REG_2 = 2;
    public static final int NFT_REG_3 = 3;
    public static final int NFT_REG_4 = 4;
    public static final int NFT_REG32_00 = 8;

    /** nftables' user data TLV types (libnftnl udata.h) that nft reads back. */
    public static final int NFTNL_UDATA_RULE_COMMENT = 0;
    public static final int NFTNL_UDATA_CHAIN_COMMENT = 0;
    public static final int NFTNL_UDATA_SET_KEYBYTEORDER = 0;
    public static final int NFTNL_UDATA_SET_DATABYTEORDER = 1;
    public static final int NFTNL_UDATA_SET_COMMENT = 7;
    public static final int NFTNL_UDATA_SET_ELEM_COMMENT = 0;

    private NfTablesUapi() {
    }
}
