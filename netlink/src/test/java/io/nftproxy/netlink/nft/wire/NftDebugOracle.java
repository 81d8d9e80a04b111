package io.nftproxy.netlink.nft.wire;

import io.nftproxy.netlink.nft.Fixture;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.print.NftPrinter;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;


/**
 * nft's own encoding of the fixture's rules ({@code nft --debug=netlink}), as the oracle for ours:
 * the nft script of the rules, our expressions read back from the bytes we encode, and nft's
 * output as checked in ({@value #GOLDEN}), which the kernel test re-derives from nft.
 */
final class NftDebugOracle {
    static final String GOLDEN = "golden/fixture-rules.netlink-debug";
    /** Where the kernel test rewrites the checked-in output when asked (surefire runs in the module). */
    static final Path GOLDEN_SOURCE = Path.of("src/test/resources").resolve(GOLDEN);

    final List<Rule> rules = new ArrayList<>();
    /** Everything but the rules: what must exist before nft can compile them. */
    final Transaction objects = new Transaction();
    final String script;

    NftDebugOracle(Fixture f) {
        Map<String, NftSet> sets = new HashMap<>();
        for (Op op : f.transaction().ops()) {
            if (op.object() instanceof Rule r) {
                rules.add(r);
            } else {
                objects.op(op.verb(), op.object());
                if (op.object() instanceof NftSet s) {
                    sets.put(s.name(), s);
                }
            }
        }
        StringBuilder sb = new StringBuilder();
        for (Rule r : rules) {
            sb.append(NftPrinter.operation(new Op(Op.Verb.ADD, r), sets::get)).append('\n');
        }
        script = sb.toString();
    }

    /** Per rule, the expressions of the bytes we send, decoded again, in nft's debug notation. */
    List<List<String>> ours() {
        List<List<String>> out = new ArrayList<>();
        for (Rule r : rules) {
            out.add(DebugFormat.sent(r));
        }
        return out;
    }

    /** Per rule, nft's expressions as checked in. */
    static List<List<String>> golden() throws IOException {
        try (InputStream in = NftDebugOracle.class.getClassLoader().getResourceAsStream(GOLDEN)) {
            if (in == null) {
                throw new IOException(GOLDEN + " is not among the test resources");
            }
            return DebugFormat.parseNftDebug(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }
}
