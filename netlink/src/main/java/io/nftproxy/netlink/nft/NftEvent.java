package io.nftproxy.netlink.nft;

/**
 * A change the kernel announced on the nf_tables multicast group. {@code object} is the decoded
 * table, chain, rule, set or elements (null for a generation event); {@code deleted} tells removal
 * from creation; {@code generation} is set on NEWGEN events, which close each committed batch.
 */
public record NftEvent(Type type, boolean deleted, Family family, NftObject object, long generation, int portId) {
    public enum Type {
        TABLE, CHAIN, RULE, SET, ELEMENTS, GENERATION
    }

    /** The table the event concerns (null for a generation event). */
    public String table() {
        return object == null ? null : object.table();
    }

    /** The chain or set name for chain, rule, set and element events. */
    public String name() {
        if (object instanceof Chain c) {
            return c.name();
        }
        if (object instanceof Rule r) {
            return r.chain();
        }
        if (object instanceof NftSet s) {
            return s.name();
        }
        if (object instanceof Elements e) {
            return e.set();
        }
        return null;
    }

    @Override
    public String toString() {
        if (type == Type.GENERATION) {
            return "generation " + generation;
        }
        return (deleted ? "delete " : "new ") + type.name().toLowerCase() + " " + family.keyword() + " " + table()
                + (name() == null ? "" : " " + name());
    }
}
