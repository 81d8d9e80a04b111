package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.nft.print.NftPrinter;

/** One operation of a transaction: a verb applied to a plain value object. */
public record Op(Verb verb, NftObject object) {
    public enum Verb {
        /** Create if absent, no error if present (rules and elements: append). */
        ADD,
        /** Create; error if it exists. */
        CREATE,
        /** Rules: insert at the start of the chain. */
        INSERT,
        /** Rules: replace the rule with the given handle. */
        REPLACE,
        /** Tables and chains: delete their rules; sets: delete their elements. */
        FLUSH,
        /** Delete; error if absent. */
        DELETE,
        /** Delete if present (Linux 6.3+). */
        DESTROY
    }

    public Op {
        if ((verb == Verb.INSERT || verb == Verb.REPLACE) && !(object instanceof Rule)) {
            throw new IllegalArgumentException(verb + " applies to rules only");
        }
        if (verb == Verb.REPLACE && ((Rule) object).handle() == 0) {
            throw new IllegalArgumentException("replace needs the rule's handle");
        }
        if ((verb == Verb.DELETE || verb == Verb.DESTROY) && object instanceof Rule r && r.handle() == 0) {
            throw new IllegalArgumentException("deleting a rule needs its handle");
        }
        if (verb == Verb.FLUSH && (object instanceof Rule || object instanceof Elements)) {
            throw new IllegalArgumentException("flush applies to tables, chains and sets");
        }
    }

    @Override
    public String toString() {
        return NftPrinter.operation(this);
    }
}
