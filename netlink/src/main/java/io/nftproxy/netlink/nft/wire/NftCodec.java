package io.nftproxy.netlink.nft.wire;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.CountedElement;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Hook;
import io.nftproxy.netlink.nft.NftObject;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Verdict;
import static io.nftproxy.netlink.msg.Netlink.NLM_F_APPEND;
import static io.nftproxy.netlink.msg.Netlink.NLM_F_CREATE;
import static io.nftproxy.netlink.msg.Netlink.NLM_F_EXCL;
import static io.nftproxy.netlink.msg.Netlink.NLM_F_REPLACE;
import static io.nftproxy.netlink.msg.Netlink.NLM_F_REQUEST;
import static io.nftproxy.netlink.nft.NfTablesUapi.*;

import java.io.ByteArrayOutputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.IntSupplier;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;
import io.nftproxy.netlink.msg.Netlink;
import io.nftproxy.netlink.msg.NlMessage;
import io.nftproxy.netlink.nft.expr.Counter;
import io.nftproxy.netlink.nft.expr.Exprs;

/**
 * Encodes operations on nf_tables objects as nfnetlink messages, and decodes the kernel's messages
 * (dump replies and monitor events) back into the same objects. Encode and decode of each object
 * type sit side by side.
 */
public final class NftCodec {
    /** Keep each element list well below the 64 KiB limit of one netlink attribute. */
    static final int ELEMENT_LIST_BUDGET = 48 * 1024;

    private NftCodec() {
    }

    /**
     * Runs a decoder on a message from the kernel. Bytes from the kernel are input: a message
     * missing an attribute its object needs, or carrying one of the wrong size, is refused with
     * an {@link IllegalArgumentException} naming the message, whatever deep inside noticed it (the
     * objects' constructors check what they need with {@code requireNonNull}, buffers check their
     * bounds). An expression we do not model is no error: it reads as {@code Opaque}.
     */
    public static <T> T decoding(NlMessage m, Function<NlMessage, T> decoder) {
        try {
            return decoder.apply(m);
        } catch (IllegalArgumentException | NullPointerException | IndexOutOfBoundsException
                 | BufferUnderflowException | IllegalStateException e) {
            throw new IllegalArgumentException("malformed nf_tables message " + describe(m.nfMsgType()) + " (seq " + m.seq()
                    + "): " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()), e);
        }
    }

    private static String describe(int msg) {
        return switch (msg) {
            case NFT_MSG_NEWTABLE -> "NEWTABLE";
            case NFT_MSG_DELTABLE -> "DELTABLE";
            case NFT_MSG_NEWCHAIN -> "NEWCHAIN";
            case NFT_MSG_DELCHAIN -> "DELCHAIN";
            case NFT_MSG_NEWRULE -> "NEWRULE";
            case NFT_MSG_DELRULE -> "DELRULE";
            case NFT_MSG_NEWSET -> "NEWSET";
            case NFT_MSG_DELSET -> "DELSET";
            case NFT_MSG_NEWSETELEM -> "NEWSETELEM";
            case NFT_MSG_DELSETELEM -> "DELSETELEM";
            case NFT_MSG_NEWGEN -> "NEWGEN";
            default -> "type " + msg;
        };
    }

    public static int type(int msg) {
        return (Netlink.NFNL_SUBSYS_NFTABLES << 8) | msg;
    }

    /**
     * Writes the message(s) of one operation. Each message takes its sequence number from
     * {@code seqs}; most operations are one message, element lists may be several.
     */
    public static void encode(MessageWriter w, Op op, IntSupplier seqs, int extraFlags) {
        NftObject o = op.object();
        if (o instanceof Table t) {
            encodeTable(w, op.verb(), t, seqs.getAsInt(), extraFlags);
        } else if (o instanceof Chain c) {
            encodeChain(w, op.verb(), c, seqs.getAsInt(), extraFlags);
        } else if (o instanceof Rule r) {
            encodeRule(w, op.verb(), r, seqs.getAsInt(), extraFlags);
        } else if (o instanceof NftSet s) {
            encodeSet(w, op.verb(), s, seqs.getAsInt(), extraFlags);
        } else if (o instanceof Elements e) {
            encodeElements(w, op.verb(), e, seqs, extraFlags);
        }
    }

    private static int newFlags(Op.Verb verb) {
        return switch (verb) {
            case ADD -> NLM_F_CREATE;
            case CREATE -> NLM_F_CREATE | NLM_F_EXCL;
            default -> 0;
        };
    }

    private static int msgFor(Op.Verb verb, int newMsg, int delMsg, int destroyMsg) {
        return switch (verb) {
            case DELETE -> delMsg;
            case DESTROY -> destroyMsg;
            default -> newMsg;
        };
    }

    // ---- tables ----

    static void encodeTable(MessageWriter w, Op.Verb verb, Table t, int seq, int extraFlags) {
        if (verb == Op.Verb.FLUSH) {
            w.beginMessage(type(NFT_MSG_DELRULE), NLM_F_REQUEST | extraFlags, seq);
            w.nfgenmsg(t.family().code(), 0);
            w.putString(NFTA_RULE_TABLE, t.name());
            w.endMessage();
            return;
        }
        int msg = msgFor(verb, NFT_MSG_NEWTABLE, NFT_MSG_DELTABLE, NFT_MSG_DESTROYTABLE);
        w.beginMessage(type(msg), NLM_F_REQUEST | newFlags(verb) | extraFlags, seq);
        w.nfgenmsg(t.family().code(), 0);
        w.putString(NFTA_TABLE_NAME, t.name());
        if (msg == NFT_MSG_NEWTABLE) {
            w.putBe32(NFTA_TABLE_FLAGS, t.flags());
        }
        w.endMessage();
    }

    public static Table decodeTable(NlMessage m) {
        Attrs a = m.nfAttrs();
        return new Table(Family.of(m.nfFamily()), a.string(NFTA_TABLE_NAME), a.be32(NFTA_TABLE_FLAGS, 0));
    }

    // ---- chains ----

    static void encodeChain(MessageWriter w, Op.Verb verb, Chain c, int seq, int extraFlags) {
        if (verb == Op.Verb.FLUSH) {
            w.beginMessage(type(NFT_MSG_DELRULE), NLM_F_REQUEST | extraFlags, seq);
            w.nfgenmsg(c.family().code(), 0);
            w.putString(NFTA_RULE_TABLE, c.table());
            w.putString(NFTA_RULE_CHAIN, c.name());
            w.endMessage();
            return;
        }
        int msg = msgFor(verb, NFT_MSG_NEWCHAIN, NFT_MSG_DELCHAIN, NFT_MSG_DESTROYCHAIN);
        w.beginMessage(type(msg), NLM_F_REQUEST | newFlags(verb) | extraFlags, seq);
        w.nfgenmsg(c.family().code(), 0);
        w.putString(NFTA_CHAIN_TABLE, c.table());
        w.putString(NFTA_CHAIN_NAME, c.name());
        if (msg == NFT_MSG_NEWCHAIN) {
            Chain.Base b = c.base();
            if (b != null) {
                int hook = w.beginNested(NFTA_CHAIN_HOOK);
                w.putBe32(NFTA_HOOK_HOOKNUM, b.hook().code());
                w.putBe32(NFTA_HOOK_PRIORITY, b.priority());
                w.endNested(hook);
                if (b.policy() != null) {
                    w.putBe32(NFTA_CHAIN_POLICY, b.policy().kind().code());
                }
                w.putString(NFTA_CHAIN_TYPE, b.type());
            }
            if (c.comment() != null) {
                w.putBytes(NFTA_CHAIN_USERDATA, udata(NFTNL_UDATA_CHAIN_COMMENT, c.comment()));
            }
        }
        w.endMessage();
    }

    public static Chain decodeChain(NlMessage m) {
        Attrs a = m.nfAttrs();
        Chain.Base base = null;
        Attrs hook = a.nested(NFTA_CHAIN_HOOK);
        if (hook != null) {
            Verdict policy = a.has(NFTA_CHAIN_POLICY)
                    ? new Verdict(Verdict.Kind.of(a.be32(NFTA_CHAIN_POLICY, 1)), null) : null;
            base = new Chain.Base(a.string(NFTA_CHAIN_TYPE), Hook.of(hook.be32(NFTA_HOOK_HOOKNUM, 0)),
                    hook.be32(NFTA_HOOK_PRIORITY, 0), policy);
        }
        return new Chain(Family.of(m.nfFamily()), a.string(NFTA_CHAIN_TABLE), a.string(NFTA_CHAIN_NAME), base,
                udataString(a.bytes(NFTA_CHAIN_USERDATA), NFTNL_UDATA_CHAIN_COMMENT));
    }

    // ---- rules ----

    static void encodeRule(MessageWriter w, Op.Verb verb, Rule r, int seq, int extraFlags) {
        int msg = msgFor(verb, NFT_MSG_NEWRULE, NFT_MSG_DELRULE, NFT_MSG_DESTROYRULE);
        int flags = NLM_F_REQUEST | extraFlags;
        switch (verb) {
            case ADD -> flags |= NLM_F_CREATE | NLM_F_APPEND;
            case CREATE -> flags |= NLM_F_CREATE | NLM_F_APPEND | NLM_F_EXCL;
            case INSERT -> flags |= NLM_F_CREATE;
            case REPLACE -> flags |= NLM_F_REPLACE;
            default -> {
            }
        }
        w.beginMessage(type(msg), flags, seq);
        w.nfgenmsg(r.family().code(), 0);
        w.putString(NFTA_RULE_TABLE, r.table());
        w.putString(NFTA_RULE_CHAIN, r.chain());
        if (r.handle() != 0 && verb != Op.Verb.ADD && verb != Op.Verb.CREATE && verb != Op.Verb.INSERT) {
            w.putBe64(NFTA_RULE_HANDLE, r.handle());
        }
        if (msg == NFT_MSG_NEWRULE) {
            Exprs.encodeList(w, NFTA_RULE_EXPRESSIONS, r.exprs());
            if (r.comment() != null) {
                w.putBytes(NFTA_RULE_USERDATA, udata(NFTNL_UDATA_RULE_COMMENT, r.comment()));
            }
        }
        w.endMessage();
    }

    public static Rule decodeRule(NlMessage m) {
        Attrs a = m.nfAttrs();
        Attrs list = a.nested(NFTA_RULE_EXPRESSIONS);
        return new Rule(Family.of(m.nfFamily()), a.string(NFTA_RULE_TABLE), a.string(NFTA_RULE_CHAIN),
                list == null ? List.of() : Exprs.decodeList(list),
                udataString(a.bytes(NFTA_RULE_USERDATA), NFTNL_UDATA_RULE_COMMENT), a.be64(NFTA_RULE_HANDLE, 0));
    }

    // ---- sets ----

    static void encodeSet(MessageWriter w, Op.Verb verb, NftSet s, int seq, int extraFlags) {
        if (verb == Op.Verb.FLUSH) {
            w.beginMessage(type(NFT_MSG_DELSETELEM), NLM_F_REQUEST | extraFlags, seq);
            w.nfgenmsg(s.family().code(), 0);
            w.putString(NFTA_SET_ELEM_LIST_TABLE, s.table());
            w.putString(NFTA_SET_ELEM_LIST_SET, s.name());
            w.endMessage();
            return;
        }
        int msg = msgFor(verb, NFT_MSG_NEWSET, NFT_MSG_DELSET, NFT_MSG_DESTROYSET);
        w.beginMessage(type(msg), NLM_F_REQUEST | newFlags(verb) | extraFlags, seq);
        w.nfgenmsg(s.family().code(), 0);
        w.putString(NFTA_SET_TABLE, s.table());
        w.putString(NFTA_SET_NAME, s.name());
        if (msg == NFT_MSG_NEWSET) {
            int flags = s.flags();
            if (s.rangeConcat()) {
                flags |= NFT_SET_CONCAT;
            }
            w.putBe32(NFTA_SET_FLAGS, flags);
            w.putBe32(NFTA_SET_KEY_TYPE, DataType.concatId(s.key()));
            w.putBe32(NFTA_SET_KEY_LEN, s.keyLength());
            if (s.data() != null) {
                if (s.isVerdictMap()) {
                    w.putBe32(NFTA_SET_DATA_TYPE, NFT_DATA_VERDICT);
                } else {
                    w.putBe32(NFTA_SET_DATA_TYPE, s.data().id());
                    w.putBe32(NFTA_SET_DATA_LEN, s.data().length());
                }
            }
            if (s.timeoutMs() > 0) {
                w.putBe64(NFTA_SET_TIMEOUT, s.timeoutMs());
            }
            w.putBe32(NFTA_SET_ID, seq);
            if (s.size() > 0 || s.rangeConcat()) {
                int desc = w.beginNested(NFTA_SET_DESC);
                if (s.size() > 0) {
                    w.putBe32(NFTA_SET_DESC_SIZE, s.size());
                }
                if (s.rangeConcat()) {
                    // Interval sets of concatenations (pipapo) need the field lengths; nft sends
                    // them only there, and the kernel then requires NFT_SET_CONCAT in the flags.
                    int concat = w.beginNested(NFTA_SET_DESC_CONCAT);
                    for (DataType f : s.key()) {
                        int elem = w.beginNested(NFTA_LIST_ELEM);
                        w.putBe32(NFTA_SET_FIELD_LEN, f.length());
                        w.endNested(elem);
                    }
                    w.endNested(concat);
                }
                w.endNested(desc);
            }
            w.putBytes(NFTA_SET_USERDATA, setUdata(s));
            if (s.counter()) {
                // As nft declares "counter" in a set: the expression's name and empty data.
                int expr = w.beginNested(NFTA_SET_EXPR);
                w.putString(NFTA_EXPR_NAME, "counter");
                w.endNested(w.beginNested(NFTA_EXPR_DATA));
                w.endNested(expr);
            }
        }
        w.endMessage();
    }

    public static NftSet decodeSet(NlMessage m) {
        Attrs a = m.nfAttrs();
        int keyLen = a.be32(NFTA_SET_KEY_LEN, 0);
        List<DataType> key = DataType.split(a.be32(NFTA_SET_KEY_TYPE, 0), keyLen);
        DataType data = null;
        if (a.has(NFTA_SET_DATA_TYPE)) {
            int dt = a.be32(NFTA_SET_DATA_TYPE, 0);
            if (dt == NFT_DATA_VERDICT) {
                data = DataType.VERDICT;
            } else {
                int len = a.be32(NFTA_SET_DATA_LEN, 0);
                data = DataType.concat(DataType.split(dt, len));
            }
        }
        int flags = a.be32(NFTA_SET_FLAGS, 0) & ~(NFT_SET_CONCAT | NFT_SET_EXPR);
        return new NftSet(Family.of(m.nfFamily()), a.string(NFTA_SET_TABLE), a.string(NFTA_SET_NAME), key, data,
                flags, a.be64(NFTA_SET_TIMEOUT, 0), udataString(a.bytes(NFTA_SET_USERDATA), NFTNL_UDATA_SET_COMMENT),
                hasCounter(a.nested(NFTA_SET_EXPR), a.nested(NFTA_SET_EXPRESSIONS)),
                a.has(NFTA_SET_DESC) ? a.nested(NFTA_SET_DESC).be32(NFTA_SET_DESC_SIZE, 0) : 0);
    }

    /** Whether a set's (or element's) expressions, one or a list, include a counter. */
    private static boolean hasCounter(Attrs one, Attrs list) {
        return counterOf(one, list) != null;
    }

    /** The counter among one expression or a list of them (NFTA_SET[_ELEM]_EXPR / _EXPRESSIONS), or null. */
    static Counter counterOf(Attrs one, Attrs list) {
        List<Attrs> exprs = new ArrayList<>();
        if (one != null) {
            exprs.add(one);
        }
        if (list != null) {
            for (Attrs.Attr item : list.all()) {
                exprs.add(item.nested());
            }
        }
        for (Attrs e : exprs) {
            if ("counter".equals(e.string(NFTA_EXPR_NAME))) {
                Attrs data = e.nested(NFTA_EXPR_DATA);
                return data == null ? Counter.zero() : Counter.decode(data);
            }
        }
        return null;
    }

    // ---- set elements ----

    static void encodeElements(MessageWriter w, Op.Verb verb, Elements e, IntSupplier seqs, int extraFlags) {
        int msg = msgFor(verb, NFT_MSG_NEWSETELEM, NFT_MSG_DELSETELEM, NFT_MSG_DESTROYSETELEM);
        int flags = NLM_F_REQUEST | newFlags(verb) | extraFlags;
        int i = 0;
        List<SetElement> els = e.elements();
        do {
            w.beginMessage(type(msg), flags, seqs.getAsInt());
            w.nfgenmsg(e.family().code(), 0);
            w.putString(NFTA_SET_ELEM_LIST_TABLE, e.table());
            w.putString(NFTA_SET_ELEM_LIST_SET, e.set());
            int list = w.beginNested(NFTA_SET_ELEM_LIST_ELEMENTS);
            while (i < els.size() && w.sizeSince(list) < ELEMENT_LIST_BUDGET) {
                encodeElement(w, els.get(i++), msg == NFT_MSG_NEWSETELEM);
            }
            w.endNested(list);
            w.endMessage();
        } while (i < els.size());
    }

    private static void encodeElement(MessageWriter w, SetElement el, boolean withData) {
        int elem = w.beginNested(NFTA_LIST_ELEM);
        Data.encode(w, NFTA_SET_ELEM_KEY, Data.value(el.key()));
        if (el.keyEnd() != null) {
            Data.encode(w, NFTA_SET_ELEM_KEY_END, Data.value(el.keyEnd()));
        }
        if (withData && el.data() != null) {
            Data.encode(w, NFTA_SET_ELEM_DATA, el.data());
        }
        if (withData && el.timeoutMs() > 0) {
            w.putBe64(NFTA_SET_ELEM_TIMEOUT, el.timeoutMs());
        }
        if (el.flags() != 0) {
            w.putBe32(NFTA_SET_ELEM_FLAGS, el.flags());
        }
        if (withData && el.comment() != null) {
            w.putBytes(NFTA_SET_ELEM_USERDATA, udata(NFTNL_UDATA_SET_ELEM_COMMENT, el.comment()));
        }
        w.endNested(elem);
    }

    public static Elements decodeElements(NlMessage m) {
        Attrs a = m.nfAttrs();
        List<SetElement> out = new ArrayList<>();
        Attrs list = a.nested(NFTA_SET_ELEM_LIST_ELEMENTS);
        if (list != null) {
            for (Attrs.Attr item : list.all()) {
                Attrs e = item.nested();
                Attrs keyEnd = e.nested(NFTA_SET_ELEM_KEY_END);
                Attrs data = e.nested(NFTA_SET_ELEM_DATA);
                out.add(new SetElement(
                        Data.decodeValue(e.nested(NFTA_SET_ELEM_KEY), "a set element's key").bytes(),
                        keyEnd == null ? null : Data.decodeValue(keyEnd, "a set element's interval end").bytes(),
                        data == null ? null : Data.decode(data),
                        e.be64(NFTA_SET_ELEM_TIMEOUT, 0), e.be64(NFTA_SET_ELEM_EXPIRATION, 0),
                        e.be32(NFTA_SET_ELEM_FLAGS, 0),
                        udataString(e.bytes(NFTA_SET_ELEM_USERDATA), NFTNL_UDATA_SET_ELEM_COMMENT)));
            }
        }
        return new Elements(Family.of(m.nfFamily()), a.string(NFTA_SET_ELEM_LIST_TABLE),
                a.string(NFTA_SET_ELEM_LIST_SET), out);
    }

    /**
     * The elements of a set declared with a counter, each with the packets and bytes its counter
     * holds (an element without one reads as zero). Written as the kernel answers a dump, for
     * tests; {@link #decodeCountedElements} reads it back.
     */
    public static void encodeCountedElements(MessageWriter w, Family family, String table, String set,
                                             List<CountedElement> els, int seq) {
        w.beginMessage(type(NFT_MSG_NEWSETELEM), NLM_F_REQUEST | Netlink.NLM_F_MULTI, seq);
        w.nfgenmsg(family.code(), 0);
        w.putString(NFTA_SET_ELEM_LIST_TABLE, table);
        w.putString(NFTA_SET_ELEM_LIST_SET, set);
        int list = w.beginNested(NFTA_SET_ELEM_LIST_ELEMENTS);
        for (CountedElement el : els) {
            int elem = w.beginNested(NFTA_LIST_ELEM);
            Data.encode(w, NFTA_SET_ELEM_KEY, Data.value(el.key()));
            if (el.data() != null) {
                Data.encode(w, NFTA_SET_ELEM_DATA, el.data());
            }
            int expr = w.beginNested(NFTA_SET_ELEM_EXPR);
            w.putString(NFTA_EXPR_NAME, "counter");
            int data = w.beginNested(NFTA_EXPR_DATA);
            new Counter(el.bytes(), el.packets()).encode(w);
            w.endNested(data);
            w.endNested(expr);
            w.endNested(elem);
        }
        w.endNested(list);
        w.endMessage();
    }

    public static List<CountedElement> decodeCountedElements(NlMessage m) {
        Attrs list = m.nfAttrs().nested(NFTA_SET_ELEM_LIST_ELEMENTS);
        List<CountedElement> out = new ArrayList<>();
        if (list != null) {
            for (Attrs.Attr item : list.all()) {
                Attrs e = item.nested();
                Attrs data = e.nested(NFTA_SET_ELEM_DATA);
                Counter c = counterOf(e.nested(NFTA_SET_ELEM_EXPR), e.nested(NFTA_SET_ELEM_EXPRESSIONS));
                out.add(new CountedElement(Data.decodeValue(e.nested(NFTA_SET_ELEM_KEY), "a set element's key").bytes(),
                        data == null ? null : Data.decode(data), c == null ? 0 : c.packets(), c == null ? 0 : c.bytes()));
            }
        }
        return out;
    }

    // ---- requests ----

    /**
     * A request for the elements of {@code set} with the given keys (GETSETELEM without
     * NLM_F_DUMP): the kernel looks each up and answers each with a message of its own, then
     * acks. A key the set does not hold ends the request with ENOENT, its extended ack pointing
     * into the element list. Returns the offset of that list in the message.
     */
    public static int encodeElementGet(MessageWriter w, Family family, String table, String set, List<Bytes> keys, int seq) {
        int start = w.beginMessage(type(NFT_MSG_GETSETELEM), NLM_F_REQUEST | Netlink.NLM_F_ACK, seq);
        w.nfgenmsg(family.code(), 0);
        w.putString(NFTA_SET_ELEM_LIST_TABLE, table);
        w.putString(NFTA_SET_ELEM_LIST_SET, set);
        int list = w.beginNested(NFTA_SET_ELEM_LIST_ELEMENTS);
        int listOffset = list - start;
        for (Bytes k : keys) {
            int elem = w.beginNested(NFTA_LIST_ELEM);
            Data.encode(w, NFTA_SET_ELEM_KEY, Data.value(k));
            w.endNested(elem);
        }
        w.endNested(list);
        w.endMessage();
        return listOffset;
    }

    /** A dump request (GET* with NLM_F_DUMP), optionally filtered by table (and chain / set). */
    public static void encodeDump(MessageWriter w, int getMsg, Family family, String table, String name, int seq) {
        w.beginMessage(type(getMsg), NLM_F_REQUEST | Netlink.NLM_F_DUMP, seq);
        w.nfgenmsg(family == null ? 0 : family.code(), 0);
        switch (getMsg) {
            case NFT_MSG_GETRULE -> {
                if (table != null) {
                    w.putString(NFTA_RULE_TABLE, table);
                }
                if (name != null) {
                    w.putString(NFTA_RULE_CHAIN, name);
                }
            }
            case NFT_MSG_GETSET -> {
                if (table != null) {
                    w.putString(NFTA_SET_TABLE, table);
                }
            }
            case NFT_MSG_GETSETELEM -> {
                w.putString(NFTA_SET_ELEM_LIST_TABLE, table);
                w.putString(NFTA_SET_ELEM_LIST_SET, name);
            }
            default -> {
                // Tables and chains: the kernel does not filter dumps by attribute; callers filter.
            }
        }
        w.endMessage();
    }

    // ---- user data (libnftnl's TLV: u8 type, u8 length, value) ----

    static byte[] udata(int type, String text) {
        byte[] s = text.getBytes(StandardCharsets.UTF_8);
        if (s.length + 1 > 255) {
            throw new IllegalArgumentException("comment too long: " + text);
        }
        byte[] out = new byte[s.length + 3];
        out[0] = (byte) type;
        out[1] = (byte) (s.length + 1);
        System.arraycopy(s, 0, out, 2, s.length);
        return out;
    }

    /**
     * The user data nft keeps with a set: the byte order of key and data (nft needs it to print
     * host-order values such as marks) and the comment. The kernel stores it opaquely.
     */
    static byte[] setUdata(NftSet s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        udataU32(out, NFTNL_UDATA_SET_KEYBYTEORDER, s.key().size() > 1 ? 0 : s.key().get(0).byteorder());
        if (s.data() != null) {
            udataU32(out, NFTNL_UDATA_SET_DATABYTEORDER, s.isVerdictMap() ? 0 : s.data().byteorder());
        }
        if (s.comment() != null) {
            out.writeBytes(udata(NFTNL_UDATA_SET_COMMENT, s.comment()));
        }
        return out.toByteArray();
    }

    private static void udataU32(ByteArrayOutputStream out, int type, int value) {
        out.write(type);
        out.write(4);
        // Host order, as libnftnl writes a uint32_t.
        out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(value).array());
    }

    static String udataString(byte[] udata, int type) {
        if (udata == null) {
            return null;
        }
        int i = 0;
        while (i + 2 <= udata.length) {
            int t = udata[i] & 0xff;
            int len = udata[i + 1] & 0xff;
            if (i + 2 + len > udata.length) {
                return null;
            }
            if (t == type) {
                int n = len;
                while (n > 0 && udata[i + 2 + n - 1] == 0) {
                    n--;
                }
                return new String(udata, i + 2, n, StandardCharsets.UTF_8);
            }
            i += 2 + len;
        }
        return null;
    }
}
