package io.nftproxy.netlink.nft;

import java.util.Objects;

/** A verdict: accept, drop, continue, return, or jump/goto to a named chain. */
public record Verdict(Kind kind, String chain) implements Data {
    public enum Kind {
        ACCEPT(NfTablesUapi.NF_ACCEPT, "accept"),
        DROP(NfTablesUapi.NF_DROP, "drop"),
        QUEUE(NfTablesUapi.NF_QUEUE, "queue"),
        CONTINUE(NfTablesUapi.NFT_CONTINUE, "continue"),
        BREAK(NfTablesUapi.NFT_BREAK, "break"),
        JUMP(NfTablesUapi.NFT_JUMP, "jump"),
        GOTO(NfTablesUapi.NFT_GOTO, "goto"),
        RETURN(NfTablesUapi.NFT_RETURN, "return");

        private final int code;
        private final String keyword;

        Kind(int code, String keyword) {
            this.code = code;
            this.keyword = keyword;
        }

        public int code() {
            return code;
        }

        public String keyword() {
            return keyword;
        }

        public static Kind of(int code) {
            for (Kind k : values()) {
                if (k.code == code) {
                    return k;
                }
            }
            throw new IllegalArgumentException("unknown verdict code " + code);
        }
    }

    public static final Verdict ACCEPT = new Verdict(Kind.ACCEPT, null);
    public static final Verdict DROP = new Verdict(Kind.DROP, null);
    public static final Verdict CONTINUE = new Verdict(Kind.CONTINUE, null);
    public static final Verdict RETURN = new Verdict(Kind.RETURN, null);

    public Verdict {
        Objects.requireNonNull(kind, "kind");
        boolean needsChain = kind == Kind.JUMP || kind == Kind.GOTO;
        if (needsChain != (chain != null)) {
            throw new IllegalArgumentException(needsChain ? kind.keyword + " needs a chain" : kind.keyword + " takes no chain");
        }
    }

    public static Verdict jump(String chain) {
        return new Verdict(Kind.JUMP, chain);
    }

    public static Verdict goTo(String chain) {
        return new Verdict(Kind.GOTO, chain);
    }

    @Override
    public String toString() {
        return chain == null ? kind.keyword : kind.keyword + " " + NftSyntax.quoteName(chain);
    }
}
