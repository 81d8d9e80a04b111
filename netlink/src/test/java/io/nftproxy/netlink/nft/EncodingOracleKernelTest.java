package io.nftproxy.netlink.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.testkit.TestNetns;

/**
 * Holds our encoding against nft's: every fixture rule is printed as nft syntax, nft compiles it
 * ({@code nft --debug=netlink}), and the expressions nft sends must be ours, field for field.
 */
class EncodingOracleKernelTest {
    @Test
    void everyRuleEncodesAsNftEncodesIt() throws Exception {
        Fixture f = new Fixture();
        Transaction tx = f.transaction();
        List<Rule> rules = new ArrayList<>();
        Transaction objects = new Transaction();
        for (Op op : tx.ops()) {
            if (op.object() instanceof Rule r) {
                rules.add(r);
            } else {
                objects.op(op.verb(), op.object());
            }
        }
        java.util.Map<String, NftSet> sets = new java.util.HashMap<>();
        for (Op op : tx.ops()) {
            if (op.object() instanceof NftSet s) {
                sets.put(s.name(), s);
            }
        }
        StringBuilder script = new StringBuilder();
        for (Rule r : rules) {
            script.append(NftPrinter.operation(new Op(Op.Verb.ADD, r), sets::get)).append('\n');
        }
        try (TestNetns ns = TestNetns.create("nftp-or"); NftClient c = NftClient.open(ns.ns())) {
            c.commit(objects);
            String debug = ns.execInput(script.toString(), "nft", "--debug=netlink", "-f", "-");
            List<List<String>> theirs = DebugFormat.parseNftDebug(debug);
            assertEquals(rules.size(), theirs.size(), "one expression block per rule in:\n" + debug);
            for (int i = 0; i < rules.size(); i++) {
                List<String> ours = new ArrayList<>();
                for (Expr e : rules.get(i).exprs()) {
                    ours.add(DebugFormat.format(e));
                }
                assertEquals(theirs.get(i), ours, "rule " + i + " in chain " + rules.get(i).chain() + ": "
                        + NftPrinter.ruleBody(rules.get(i), sets::get));
            }
        }
    }
}
