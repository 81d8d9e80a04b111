package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.SetElement;

/** Interval set changes as whole ranges: what goes, what comes, in the order the kernel accepts. */
class IntervalRangesTest {
    /** "a-b" is a range from a to b (b one past it, as the end element's key); "a-" runs to the top. */
    static List<SetElement> elements(String ranges) {
        List<SetElement> out = new ArrayList<>();
        for (String r : ranges.isBlank() ? new String[0] : ranges.split(" ")) {
            String[] ab = r.split("-", -1);
            out.add(SetElement.of(Bytes.ip(ab[0])));
            if (!ab[1].isEmpty()) {
                out.add(new SetElement(Bytes.ip(ab[1]), null, null, 0, 0, NfTablesUapi.NFT_SET_ELEM_INTERVAL_END));
            }
        }
        return out;
    }

    static String print(List<SetElement> els) {
        List<String> out = new ArrayList<>();
        for (SetElement e : els) {
            out.add((e.isIntervalEnd() ? "end " : "start ") + e.key().toString().replace("0x", ""));
        }
        return String.join(", ", out);
    }

    static Stream<Arguments> changes() {
        return Stream.of(
                // a range added above another: start before end (end first reads as two ends in a row)
                Arguments.of("10.96.0.0-10.97.0.0", "10.96.0.0-10.97.0.0 10.98.0.0-10.99.0.0",
                        "", "start 0a620000, end 0a630000"),
                // a range removed below another, one added under the other's end: the changed range goes whole
                Arguments.of("10.97.0.0-10.99.0.0 10.100.0.0-10.100.1.0", "10.96.128.0-10.97.0.0 10.98.0.0-10.99.0.0",
                        "start 0a610000, end 0a630000, start 0a640000, end 0a640100",
                        "start 0a608000, end 0a610000, start 0a620000, end 0a630000"),
                // one range's end moves: that range goes and comes whole; the other stays
                Arguments.of("10.96.0.0-10.97.0.0 10.98.0.0-10.99.0.0", "10.96.0.0-10.97.2.0 10.98.0.0-10.99.0.0",
                        "start 0a600000, end 0a610000", "start 0a600000, end 0a610200"),
                // a range to the top of the space has no end element
                Arguments.of("0.0.0.0-127.0.0.0 128.0.0.0-", "0.0.0.0-127.0.0.0",
                        "start 80000000", ""),
                // nothing changes
                Arguments.of("10.96.0.0-10.97.0.0", "10.96.0.0-10.97.0.0", "", ""));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource("changes")
    void aChangeIsWholeRanges(String before, String after, String removes, String adds) {
        Map<Bytes, SetElement> changed = new HashMap<>();
        for (SetElement e : elements(before)) {
            changed.put(e.key(), null);
        }
        for (SetElement e : elements(after)) {
            changed.put(e.key(), e);
        }
        IntervalRanges.Change c = IntervalRanges.of(elements(before), changed);
        assertEquals(removes, print(c.removes()), "deleted");
        assertEquals(adds, print(c.adds()), "added");
    }
}
