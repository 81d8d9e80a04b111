package io.nftproxy.proxy.sync;

import java.util.ArrayList;
import java.util.List;

import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.NftObject;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Dynset;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.netlink.nft.expr.Lookup;

/**
 * The names our sets and chains carry in the kernel. Taking over the table of a previous run (a
 * restart, an upgrade) in one transaction holds every other nftables user of the node for as long
 * as the kernel takes to replace it (7.6 s at 100,000 services), and reading back what that table
 * holds, to converge it in small transactions, takes longer than writing it anew
 * (docs/benchmarks.md). So the new ruleset is written beside the old one, in small transactions,
 * under names of its own, which nothing reaches until the base chains' rules are switched to it
 * in one small transaction; then the old one is deleted. Generation 0 carries the renderer's
 * names, generation 1 the same with {@value #SUFFIX} appended, and each takeover goes to the
 * other. The base chains ({@link NftRenderer#isBaseChain}) keep their names: they are where the
 * kernel's traffic enters the table.
 *
 * <p>The renderer and what the syncer holds use the renderer's names; a generation renames
 * transactions on their way to the kernel and names read back from it ({@link #original}).
 * {@value #SUFFIX} ends no name the renderer gives (a dot followed by a letter past {@code f}
 * cannot end an IPv6 address written with dots), and keeps every name an nft identifier.
 */
public record Generation(int number) {
    public static final Generation FIRST = new Generation(0);
    public static final Generation SECOND = new Generation(1);
    public static final String SUFFIX = ".g1";

    public Generation {
        if (number != 0 && number != 1) {
            throw new IllegalArgumentException("generation 0 or 1: " + number);
        }
    }

    /** The generation a takeover of a table in this one builds. */
    public Generation other() {
        return number == 0 ? SECOND : FIRST;
    }

    /** The generation an object's name in the kernel belongs to. */
    public static Generation of(String kernelName) {
        return kernelName.endsWith(SUFFIX) ? SECOND : FIRST;
    }

    /** The renderer's name of an object named {@code kernelName} in the kernel. */
    public static String original(String kernelName) {
        return kernelName != null && kernelName.endsWith(SUFFIX)
                ? kernelName.substring(0, kernelName.length() - SUFFIX.length()) : kernelName;
    }

    /** A set's name in the kernel. */
    public String set(String name) {
        return number == 0 ? name : name + SUFFIX;
    }

    /** A chain's name in the kernel: a base chain keeps its name. */
    public String chain(String name) {
        return number == 0 || NftRenderer.isBaseChain(name) ? name : name + SUFFIX;
    }

    /** {@code tx} with every name in this generation (itself for generation 0). */
    public Transaction apply(Transaction tx) {
        if (number == 0) {
            return tx;
        }
        Transaction out = new Transaction();
        for (Op op : tx.ops()) {
            out.op(op.verb(), object(op.object()));
        }
        return out;
    }

    /** One object with every name it carries in this generation. */
    public NftObject object(NftObject o) {
        if (number == 0) {
            return o;
        }
        if (o instanceof Chain c) {
            return c.base() != null ? c : new Chain(c.family(), c.table(), chain(c.name()), null, c.comment());
        }
        if (o instanceof Rule r) {
            return rule(r);
        }
        if (o instanceof NftSet s) {
            return new NftSet(s.family(), s.table(), set(s.name()), s.key(), s.data(), s.flags(), s.timeoutMs(),
                    s.comment(), s.counter(), s.size());
        }
        if (o instanceof Elements e) {
            return new Elements(e.family(), e.table(), set(e.set()), elements(e.elements()));
        }
        return o; // the table
    }

    /** A rule in this generation: its chain, and the sets and chains its expressions name. */
    public Rule rule(Rule r) {
        if (number == 0) {
            return r;
        }
        List<Expr> exprs = new ArrayList<>(r.exprs().size());
        for (Expr x : r.exprs()) {
            exprs.add(expr(x));
        }
        return new Rule(r.family(), r.table(), chain(r.chain()), exprs, r.comment(), r.handle());
    }

    private Expr expr(Expr x) {
        if (x instanceof Lookup l) {
            return new Lookup(set(l.set()), l.sreg(), l.dreg(), l.invert());
        }
        if (x instanceof Dynset d) {
            return new Dynset(set(d.set()), d.op(), d.sregKey(), d.sregData(), d.timeoutMs());
        }
        if (x instanceof Immediate i && i.data() instanceof Verdict v && v.chain() != null) {
            return new Immediate(i.dreg(), verdict(v));
        }
        return x;
    }

    private Verdict verdict(Verdict v) {
        return v.chain() == null ? v : new Verdict(v.kind(), chain(v.chain()));
    }

    /**
     * Elements whose data is a jump or goto name a chain: renamed. A set's elements all carry the
     * same kind of data, so the first one says whether the rest need looking at (the elements of
     * data maps stay packed as they are).
     */
    private List<SetElement> elements(List<SetElement> els) {
        if (els.isEmpty() || !(els.get(0).data() instanceof Verdict)) {
            return els;
        }
        List<SetElement> out = new ArrayList<>(els.size());
        for (SetElement e : els) {
            Data d = e.data();
            out.add(d instanceof Verdict v && v.chain() != null
                    ? new SetElement(e.key(), e.keyEnd(), verdict(v), e.timeoutMs(), e.expiresMs(), e.flags(), e.comment())
                    : e);
        }
        return out;
    }
}
