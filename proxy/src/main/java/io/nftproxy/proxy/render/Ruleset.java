package io.nftproxy.proxy.render;

import java.util.List;

import io.nftproxy.proxy.model.IpFamily;

/** The whole desired state: one table per IP family in use. */
public record Ruleset(List<FamilyRuleset> families) {
    public Ruleset {
        families = List.copyOf(families);
    }

    public FamilyRuleset family(IpFamily f) {
        return families.stream().filter(r -> r.family() == f).findFirst().orElse(null);
    }
}
