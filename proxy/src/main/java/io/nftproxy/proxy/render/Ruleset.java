package io.nftproxy.proxy.render;

import java.util.List;

/** The whole desired state: one table per IP family in use. */
public record Ruleset(List<FamilyRuleset> families) {
    public Ruleset {
        families = List.copyOf(families);
    }

    public FamilyRuleset family(io.nftproxy.proxy.model.IpFamily f) {
        return families.stream().filter(r -> r.family() == f).findFirst().orElse(null);
    }
}
