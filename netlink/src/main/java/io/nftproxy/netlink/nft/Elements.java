package io.nftproxy.netlink.nft;

import java.util.List;
import java.util.Objects;

/** Elements of one named set or map: the object of add/delete element operations. */
public record Elements(Family family, String table, String set, List<SetElement> elements) implements NftObject {
    public Elements {
        Objects.requireNonNull(family, "family");
        NftSyntax.checkName("table", table);
        NftSyntax.checkName("set", set);
        // A packed list is immutable already; copying it would unpack every element.
        elements = elements instanceof PackedElements || elements instanceof PackedSegments ? elements : List.copyOf(elements);
    }

    public static Elements of(NftSet s, List<SetElement> elements) {
        return new Elements(s.family(), s.table(), s.name(), elements);
    }
}
