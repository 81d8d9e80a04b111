package io.nftproxy.netlink.nft;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/** Names and quoting as nft's scanner reads them. */
public final class NftSyntax {
    /** NFT_NAME_MAXLEN (256) includes the terminating NUL. */
    public static final int NAME_MAX_BYTES = 255;
    /** nft refuses longer comments (libnftnl's NFTNL_UDATA_COMMENT_MAXLEN), so a listing of ours parses back. */
    public static final int MAX_COMMENT_BYTES = 128;
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9/\\\\_.\\-]*");

    private NftSyntax() {
    }

    public static void checkName(String what, String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException(what + " name is empty");
        }
        if (name.getBytes(StandardCharsets.UTF_8).length > NAME_MAX_BYTES) {
            throw new IllegalArgumentException(what + " name longer than " + NAME_MAX_BYTES + " bytes: " + name);
        }
        if (name.indexOf('"') >= 0 || name.indexOf('\n') >= 0 || name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException(what + " name has a character nft cannot quote: " + name);
        }
    }

    /** The name as nft -f reads it: bare when it is an identifier, else in double quotes. */
    public static String quoteName(String name) {
        return IDENTIFIER.matcher(name).matches() ? name : "\"" + name + "\"";
    }

    public static String quoteString(String s) {
        return "\"" + s.replace("\"", "'") + "\"";
    }
}
