package io.nftproxy.netlink.nft.print;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftObject;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.NftSyntax;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.nft.Verdict;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** Prints the model in nft syntax: operations as nft commands, tables as {@code nft list table}. */
public final class NftPrinter {
    private NftPrinter() {
    }

    private static String head(NftObject o) {
        return o.family().keyword() + " " + NftSyntax.quoteName(o.table());
    }

    /** One operation as an nft command. Elements print raw keys when the set's type is unknown. */
    public static String operation(Op op) {
        return operation(op, name -> null);
    }

    public static String operation(Op op, Function<String, NftSet> sets) {
        NftObject o = op.object();
        String verb = switch (op.verb()) {
            case ADD, REPLACE -> op.verb() == Op.Verb.REPLACE ? "replace" : "add";
            case CREATE -> o instanceof Rule ? "add" : "create";
            case INSERT -> "insert";
            case FLUSH -> "flush";
            case DELETE -> "delete";
            case DESTROY -> "destroy";
        };
        boolean removing = op.verb() == Op.Verb.DELETE || op.verb() == Op.Verb.DESTROY || op.verb() == Op.Verb.FLUSH;
        if (o instanceof Table t) {
            return verb + " table " + head(t) + (!removing && t.flags() != 0 ? " { flags " + tableFlags(t.flags()) + "; }" : "");
        }
        if (o instanceof Chain c) {
            String s = verb + " chain " + head(c) + " " + NftSyntax.quoteName(c.name());
            return removing ? s : s + chainSpec(c, " ", " ");
        }
        if (o instanceof Rule r) {
            String s = verb + " rule " + head(r) + " " + NftSyntax.quoteName(r.chain());
            if (op.verb() == Op.Verb.REPLACE || op.verb() == Op.Verb.DELETE || op.verb() == Op.Verb.DESTROY) {
                s += " handle " + r.handle();
            }
            return removing ? s : s + " " + ruleBody(r, sets);
        }
        if (o instanceof NftSet set) {
            String kind = set.isMap() ? "map" : "set";
            if (op.verb() == Op.Verb.FLUSH) {
                kind = "set";
            }
            String s = verb + " " + kind + " " + head(set) + " " + NftSyntax.quoteName(set.name());
            return removing ? s : s + " { " + String.join("; ", setSpec(set)) + "; }";
        }
        Elements e = (Elements) o;
        NftSet set = sets.apply(e.set());
        return verb + " element " + head(e) + " " + NftSyntax.quoteName(e.set()) + " { "
                + elements(set, e.elements(), !removing) + " }";
    }

    private static String tableFlags(int flags) {
        List<String> f = new ArrayList<>();
        if ((flags & NfTablesUapi.NFT_TABLE_F_DORMANT) != 0) {
            f.add("dormant");
        }
        if ((flags & NfTablesUapi.NFT_TABLE_F_OWNER) != 0) {
            f.add("owner");
        }
        return String.join(",", f);
    }

    private static String chainSpec(Chain c, String open, String sep) {
        List<String> parts = new ArrayList<>();
        if (c.base() != null) {
            Chain.Base b = c.base();
            parts.add("type " + b.type() + " hook " + b.hook().keyword() + " priority " + b.priority());
            if (b.policy() != null) {
                parts.add("policy " + b.policy().kind().keyword());
            }
        }
        if (c.comment() != null) {
            parts.add("comment " + NftSyntax.quoteString(c.comment()));
        }
        if (parts.isEmpty()) {
            return "";
        }
        return open + "{ " + String.join(";" + sep, parts) + "; }";
    }

    /** A rule's statements, and its comment, in nft syntax. */
    public static String ruleBody(Rule r, Function<String, NftSet> sets) {
        String body = RulePrinter.print(r.family(), r.exprs(), sets);
        if (r.comment() != null) {
            body += " comment " + NftSyntax.quoteString(r.comment());
        }
        return body;
    }

    public static List<String> setSpec(NftSet s) {
        List<String> lines = new ArrayList<>();
        StringBuilder type = new StringBuilder("type ");
        List<String> names = new ArrayList<>();
        for (DataType t : s.key()) {
            names.add(t.name());
        }
        type.append(String.join(" . ", names));
        if (s.data() != null) {
            type.append(" : ").append(s.data().name());
        }
        lines.add(type.toString());
        if (s.size() > 0) {
            lines.add("size " + s.size());
        }
        List<String> flags = new ArrayList<>();
        if (s.has(NfTablesUapi.NFT_SET_CONSTANT)) {
            flags.add("constant");
        }
        if (s.has(NfTablesUapi.NFT_SET_INTERVAL)) {
            flags.add("interval");
        }
        if (s.has(NfTablesUapi.NFT_SET_TIMEOUT)) {
            flags.add("timeout");
        }
        if (s.has(NfTablesUapi.NFT_SET_EVAL)) {
            flags.add("dynamic");
        }
        if (!flags.isEmpty()) {
            lines.add("flags " + String.join(",", flags));
        }
        if (s.timeoutMs() > 0) {
            lines.add("timeout " + ValueFormat.duration(s.timeoutMs()));
        }
        if (s.counter()) {
            lines.add("counter");
        }
        if (s.comment() != null) {
            lines.add("comment " + NftSyntax.quoteString(s.comment()));
        }
        return lines;
    }

    static String elements(NftSet set, List<SetElement> els, boolean withData) {
        if (set != null && set.has(NfTablesUapi.NFT_SET_INTERVAL) && !set.rangeConcat()) {
            return intervals(set, els);
        }
        List<SetElement> sorted = new ArrayList<>(els);
        // The kernel dumps in hash order; print in key order so output is stable and diffable.
        sorted.sort(SetElement.INTERVAL_ORDER);
        List<String> out = new ArrayList<>(els.size());
        for (SetElement el : sorted) {
            StringBuilder sb = new StringBuilder();
            if (set != null && set.rangeConcat() && el.keyEnd() != null) {
                // A concatenation of ranges: nft reads "a . b-c . d", a range per field.
                sb.append(ValueFormat.keyRange(set.key(), el.key(), el.keyEnd()));
            } else {
                sb.append(set == null ? el.key().toString() : ValueFormat.key(set.key(), el.key()));
                if (el.keyEnd() != null) {
                    sb.append('-').append(set == null ? el.keyEnd().toString() : ValueFormat.key(set.key(), el.keyEnd()));
                }
            }
            if (withData && el.timeoutMs() > 0) {
                sb.append(" timeout ").append(ValueFormat.duration(el.timeoutMs()));
            }
            if (withData && el.comment() != null) {
                sb.append(" comment ").append(NftSyntax.quoteString(el.comment()));
            }
            if (withData && el.data() != null) {
                sb.append(" : ");
                if (el.data() instanceof Verdict v) {
                    sb.append(v);
                } else {
                    Bytes b = ((Data.Value) el.data()).bytes();
                    sb.append(set == null || set.data() == null ? b.toString() : ValueFormat.data(set.data(), b));
                }
            }
            out.add(sb.toString());
        }
        return String.join(", ", out);
    }

    /**
     * An interval set of one field as ranges. The kernel keeps each range as a start element and
     * an end element flagged INTERVAL_END whose key is one past the range.
     */
    private static String intervals(NftSet set, List<SetElement> els) {
        List<SetElement> sorted = new ArrayList<>(els);
        sorted.sort(SetElement.INTERVAL_ORDER);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < sorted.size(); i++) {
            SetElement start = sorted.get(i);
            if (start.isIntervalEnd()) {
                continue;
            }
            Bytes last;
            if (i + 1 < sorted.size() && sorted.get(i + 1).isIntervalEnd()) {
                last = minusOne(sorted.get(i + 1).key());
                i++;
            } else {
                last = allOnes(start.key().length());
            }
            String a = ValueFormat.key(set.key(), start.key());
            out.add(last.equals(start.key()) ? a : a + "-" + ValueFormat.key(set.key(), last));
        }
        return String.join(", ", out);
    }

    private static Bytes minusOne(Bytes b) {
        byte[] a = b.toArray();
        for (int i = a.length - 1; i >= 0; i--) {
            if (a[i]-- != 0) {
                break;
            }
        }
        return Bytes.of(a);
    }

    private static Bytes allOnes(int len) {
        byte[] a = new byte[len];
        Arrays.fill(a, (byte) 0xff);
        return Bytes.of(a);
    }

    /** A whole table as {@code nft list table} prints it, loadable with {@code nft -f}. */
    public static String table(TableContents tc) {
        Map<String, NftSet> byName = new HashMap<>();
        for (NftSet s : tc.sets()) {
            byName.put(s.name(), s);
        }
        Table t = tc.table();
        StringBuilder sb = new StringBuilder();
        sb.append("table ").append(t.family().keyword()).append(' ').append(NftSyntax.quoteName(t.name())).append(" {\n");
        if (t.flags() != 0) {
            sb.append("\tflags ").append(tableFlags(t.flags())).append("\n");
        }
        for (NftSet s : tc.sets()) {
            sb.append('\t').append(s.isMap() ? "map " : "set ").append(NftSyntax.quoteName(s.name())).append(" {\n");
            for (String line : setSpec(s)) {
                sb.append("\t\t").append(line).append('\n');
            }
            List<SetElement> els = tc.elements().getOrDefault(s.name(), List.of());
            if (!els.isEmpty()) {
                sb.append("\t\telements = { ").append(elements(s, els, true)).append(" }\n");
            }
            sb.append("\t}\n");
        }
        Map<String, List<Rule>> rulesByChain = new HashMap<>(); // one pass: a filter per chain was quadratic
        for (Rule r : tc.rules()) {
            rulesByChain.computeIfAbsent(r.chain(), k -> new ArrayList<>()).add(r);
        }
        for (Chain c : tc.chains()) {
            sb.append("\tchain ").append(NftSyntax.quoteName(c.name())).append(" {\n");
            if (c.comment() != null) {
                sb.append("\t\tcomment ").append(NftSyntax.quoteString(c.comment())).append('\n');
            }
            if (c.base() != null) {
                Chain.Base b = c.base();
                sb.append("\t\ttype ").append(b.type()).append(" hook ").append(b.hook().keyword())
                        .append(" priority ").append(b.priority()).append(';');
                if (b.policy() != null) {
                    sb.append(" policy ").append(b.policy().kind().keyword()).append(';');
                }
                sb.append('\n');
            }
            for (Rule r : rulesByChain.getOrDefault(c.name(), List.of())) {
                sb.append("\t\t").append(ruleBody(r, byName::get)).append('\n');
            }
            sb.append("\t}\n");
        }
        sb.append("}\n");
        return sb.toString();
    }
}
