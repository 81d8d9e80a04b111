package io.nftproxy.proxy.render;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;

/** Endpoints keep their indices from one sync to the next. */
class EndpointSlotsTest {
    private static List<Endpoint> eps(String letters) {
        List<Endpoint> out = new ArrayList<>();
        for (char c : letters.toCharArray()) {
            out.add(Endpoint.ready(Inet.parse("10.244.1." + (c - 'a' + 2)), 8080, "node-b"));
        }
        return out;
    }

    private static String letters(List<Endpoint> eps) {
        StringBuilder sb = new StringBuilder();
        for (Endpoint e : eps) {
            sb.append((char) ('a' + (e.address().getAddress()[3] - 2)));
        }
        return sb.toString();
    }

    @Test
    void indicesMoveOnlyWhereTheyMust() {
        // previous order, current endpoints (in the order the source gives them), order assigned
        String[][] table = {
                {"", "cab", "cab"},             // nothing held: the source's order
                {"abc", "cba", "abc"},          // the same endpoints reordered by the source: nothing moves
                {"abc", "abcd", "abcd"},        // one added: it takes the new last index
                {"abc", "dabc", "abcd"},        // wherever the source lists it
                {"abcd", "acd", "adc"},         // one removed: the last takes its index
                {"abcd", "abc", "abc"},         // the last removed: nothing else moves
                {"abcd", "bd", "db"},           // two removed: d moves into the first free index
                {"abcd", "aecd", "aecd"},       // one replaced: the new one takes the freed index
                {"abc", "", ""},
                {"abc", "xyz", "xyz"},          // all replaced
        };
        for (String[] row : table) {
            List<Endpoint> got = EndpointSlots.assign(eps(row[0]), eps(row[1]));
            assertEquals(row[2], letters(got), "previous " + row[0] + ", now " + row[1]);
        }
    }

    @Test
    void theCurrentCopyOfAnEndpointIsKept() {
        Endpoint held = Endpoint.ready(Inet.parse("10.244.1.2"), 8080, "node-b");
        Endpoint now = Endpoint.builder(held.address(), 8080).node("node-b").ready(false).terminating(true).build();
        assertEquals(List.of(now), EndpointSlots.assign(List.of(held), List.of(now)));
    }

    @Test
    void removingAnEndpointRewritesOnlyTheIndexItLeaves() {
        NftRenderer r = new NftRenderer(NftRendererTest.CFG);
        var svc = NftRendererTest.svc("web", "10.96.0.10", 0, false, 0);
        Fragment before = r.service(IpFamily.V4, svc, eps("abcd"), NftRendererTest.NODE);
        Fragment after = r.service(IpFamily.V4, svc, eps("abd"), NftRendererTest.NODE, before);
        Map<Bytes, Data> was = byKey(before.elements().get("service-endpoints-1-8"));
        Map<Bytes, Data> is = byKey(after.elements().get("service-endpoints-1-8"));
        assertEquals(3, is.size());
        int changed = 0;
        for (var e : is.entrySet()) {
            if (!e.getValue().equals(was.get(e.getKey()))) {
                changed++;
            }
        }
        assertEquals(1, changed, "only index 2 (c's) changes: d moves into it");
        assertEquals("abd", letters(after.slots().cluster()));
    }

    private static Map<Bytes, Data> byKey(List<SetElement> els) {
        Map<Bytes, Data> out = new java.util.HashMap<>();
        for (SetElement e : els) {
            out.put(e.key(), e.data());
        }
        return out;
    }
}
