package io.nftproxy.netlink.nft;

/**
 * One trace event of a packet marked with {@code meta nftrace set 1}: the kernel reports each
 * rule that decided something for it (and a chain's policy or return) with the packet as it is at
 * that point. Events of one packet share an {@code id}.
 *
 * @param type       what the event reports: a rule's verdict, a chain's return, a base chain's policy
 * @param ruleHandle the rule's handle (0 for a policy or return)
 * @param verdict    the verdict given (null when the kernel gave none)
 * @param policy     the base chain's policy verdict code for a POLICY event (-1 otherwise)
 * @param iif        input interface index (0: none), {@code iifType} its ARPHRD type
 * @param oif        output interface index (0: none), {@code oifType} its ARPHRD type
 * @param mark       the packet's mark
 * @param nfproto    the netfilter protocol family processed (NFPROTO_IPV4 = 2, NFPROTO_IPV6 = 10)
 * @param network    the packet's network header (and what follows, up to the kernel's limit), or null
 * @param transport  its transport header, or null
 */
public record NftTrace(long id, Type type, Family family, String table, String chain, long ruleHandle, Verdict verdict,
                       int policy, int iif, int iifType, int oif, int oifType, long mark, int nfproto,
                       Bytes network, Bytes transport) {
    public enum Type {
        UNSPEC(0), POLICY(1), RETURN(2), RULE(3);

        private final int code;

        Type(int code) {
            this.code = code;
        }

        public int code() {
            return code;
        }

        public static Type of(int code) {
            for (Type t : values()) {
                if (t.code == code) {
                    return t;
                }
            }
            throw new IllegalArgumentException("unknown trace event type " + code);
        }
    }
}
