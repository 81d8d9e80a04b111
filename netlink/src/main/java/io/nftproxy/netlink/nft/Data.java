package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.msg.Attrs;
import io.nftproxy.netlink.msg.MessageWriter;

/** The payload of struct nft_data: a value (bytes) or a verdict. */
public sealed interface Data permits Data.Value, Verdict {

    /** Value data, e.g. the element of a data map or an immediate operand. */
    record Value(Bytes bytes) implements Data {
        @Override
        public String toString() {
            return bytes.toString();
        }
    }

    static Value value(Bytes b) {
        return new Value(b);
    }

    /** Writes this as the nested NFTA_DATA_* attributes of an attribute of the given type. */
    static void encode(MessageWriter w, int type, Data data) {
        int nest = w.beginNested(type);
        if (data instanceof Value v) {
            w.putBytes(NfTablesUapi.NFTA_DATA_VALUE, v.bytes().toArray());
        } else if (data instanceof Verdict vd) {
            int inner = w.beginNested(NfTablesUapi.NFTA_DATA_VERDICT);
            w.putBe32(NfTablesUapi.NFTA_VERDICT_CODE, vd.kind().code());
            if (vd.chain() != null) {
                w.putString(NfTablesUapi.NFTA_VERDICT_CHAIN, vd.chain());
            }
            w.endNested(inner);
        }
        w.endNested(nest);
    }

    /** A value where only a value may stand (keys, compare and bitwise operands): a verdict there is refused. */
    static Value decodeValue(Attrs nested, String what) {
        if (nested == null) {
            throw new IllegalArgumentException(what + " is missing");
        }
        if (decode(nested) instanceof Value v) {
            return v;
        }
        throw new IllegalArgumentException(what + " is a verdict where a value must be");
    }

    static Data decode(Attrs nested) {
        if (nested.has(NfTablesUapi.NFTA_DATA_VERDICT)) {
            Attrs v = nested.nested(NfTablesUapi.NFTA_DATA_VERDICT);
            Verdict.Kind kind = Verdict.Kind.of(v.be32(NfTablesUapi.NFTA_VERDICT_CODE, 0));
            return new Verdict(kind, v.string(NfTablesUapi.NFTA_VERDICT_CHAIN));
        }
        byte[] b = nested.bytes(NfTablesUapi.NFTA_DATA_VALUE);
        if (b == null) {
            throw new IllegalArgumentException("nft_data with neither value nor verdict");
        }
        return new Value(Bytes.of(b));
    }
}
