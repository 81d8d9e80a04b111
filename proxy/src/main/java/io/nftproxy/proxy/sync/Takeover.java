package io.nftproxy.proxy.sync;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;

import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftKernel;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Dynset;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.netlink.nft.expr.Lookup;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.render.DesiredChain;

/**
 * Taking over tables of ours that are in the kernel already (a restart, an upgrade, a rebuild
 * after drift) without holding every other nftables user of the node for the whole ruleset: the
 * new ruleset is written beside the one in use under the other {@link Generation}'s names, in
 * small transactions, with the base chains' rules held back ({@link FirstSyncBatches#globals}), so
 * nothing reaches it; one small
 * transaction then points the base chains at it ({@link #switchTo}); the old generation is deleted
 * afterwards in small transactions ({@link #drop}). Traffic meets the old ruleset or the new one,
 * whole, at every moment.
 *
 * <p>Reading what the kernel holds is lock-free (dumps), and only the tables' chains and sets are
 * listed, not their rules or elements, except where a generation's leftovers must be emptied
 * (below). Everything but those reads is a pure function of what was listed and what we hold.
 */
final class Takeover {
    private Takeover() {
    }

    /** One family's table as listed from the kernel: its chains and sets, without rules or elements. */
    record Listing(Table table, List<Chain> chains, List<NftSet> sets) {
    }

    /** Our tables in the kernel, per family (a family without a table of ours is absent). */
    static Map<IpFamily, Listing> list(NftKernel kernel, String table) throws NftException {
        Map<IpFamily, Listing> out = new EnumMap<>(IpFamily.class);
        for (IpFamily f : IpFamily.values()) {
            if (kernel.hasTable(f.nft(), table)) {
                out.put(f, new Listing(new Table(f.nft(), table), kernel.listChains(f.nft(), table),
                        kernel.listSets(f.nft(), table)));
            }
        }
        return out;
    }

    /**
     * The generation the base chains of our tables reach (the jumps and lookups of their rules),
     * read without a lock; {@link Generation#FIRST} when they reach nothing, null when they reach
     * both (not a table we wrote: it is replaced in one transaction).
     */
    static Generation inUse(NftKernel kernel, Map<IpFamily, Listing> tables) throws NftException {
        Set<Generation> seen = new HashSet<>();
        for (Map.Entry<IpFamily, Listing> e : tables.entrySet()) {
            for (Chain c : e.getValue().chains()) {
                if (c.isBase() && NftRenderer.isBaseChain(c.name())) {
                    for (Rule r : kernel.listRules(c.family(), c.table(), c.name())) {
                        for (String name : referenced(r)) {
                            seen.add(Generation.of(name));
                        }
                    }
                }
            }
        }
        return seen.size() > 1 ? null : seen.isEmpty() ? Generation.FIRST : seen.iterator().next();
    }

    private static List<String> referenced(Rule r) {
        List<String> out = new ArrayList<>();
        for (Expr x : r.exprs()) {
            if (x instanceof Lookup l) {
                out.add(l.set());
            } else if (x instanceof Dynset d) {
                out.add(d.set());
            } else if (x instanceof Immediate i && i.data() instanceof Verdict v && v.chain() != null) {
                out.add(v.chain());
            }
        }
        return out;
    }

    /**
     * The switch, one small transaction: every base chain we hold gets its rules in generation
     * {@code to} (flushed, then added), and any other base chain in our tables goes (one we no
     * longer declare, or someone else's; not {@code nftproxy trace}'s marking chains); the table of
     * a family we no longer hold goes whole ({@link io.nftproxy.proxy.plan.TableFamilies}). The
     * kernel validates what the base chains reach, once.
     */
    static Transaction switchTo(Generation to, Map<IpFamily, TableState> held, Map<IpFamily, Listing> kernel) {
        Transaction tx = new Transaction();
        for (Map.Entry<IpFamily, TableState> e : held.entrySet()) {
            TableState ts = e.getValue();
            for (DesiredChain c : ts.chains.values()) {
                if (c.chain().isBase()) {
                    tx.flush(c.chain());
                    for (Rule r : c.rules()) {
                        tx.add(to.rule(r));
                    }
                }
            }
            Listing l = kernel.get(e.getKey());
            for (Chain c : l == null ? List.<Chain>of() : l.chains()) {
                if (c.isBase() && !NftRenderer.isTraceChain(c.name()) && !ts.chains.containsKey(c.name())) {
                    tx.flush(c).delete(c);
                }
            }
        }
        kernel.forEach((f, l) -> {
            if (!held.containsKey(f)) {
                tx.delete(l.table()); // a family the node no longer has: its table goes, whole
            }
        });
        return tx;
    }

    /**
     * The transactions that delete every set and chain of generation {@code g} listed in
     * {@code kernel} (not the base chains, and not chains of someone else's hooks, such as
     * {@code nftproxy trace}'s), nothing reaching them, each transaction of about {@code limit}
     * objects. Deleting a set deletes its elements under the kernel's lock, 0.5 s for a million, so a
     * set {@code keysOf} gives keys for is emptied first, {@code limit} keys a transaction, by
     * {@code DESTROYSETELEM} (a key not in the set is no error); what is left goes with the set.
     * Then the chains' rules are flushed (they reference sets and chains), the sets deleted (a verdict
     * map's elements reference chains), the chains deleted.
     *
     * @param keysOf the keys to empty a set by, given its family and name in the renderer's terms
     *               (null: none); an interval set is never emptied by key (its elements are ranges)
     * @param rulesOf how many rules a chain holds (by the renderer's name), to size the flushes
     */
    static List<Transaction> drop(Generation g, Map<IpFamily, Listing> kernel,
                                  BiFunction<IpFamily, String, List<Bytes>> keysOf,
                                  BiFunction<IpFamily, String, Integer> rulesOf, int limit) {
        TransactionPacker out = new TransactionPacker(limit);
        Map<IpFamily, List<Chain>> chains = new EnumMap<>(IpFamily.class);
        Map<IpFamily, List<NftSet>> sets = new EnumMap<>(IpFamily.class);
        kernel.forEach((f, l) -> {
            chains.put(f, l.chains().stream().filter(c -> !c.isBase() && Generation.of(c.name()).equals(g)).toList());
            // An anonymous set goes with the rule it belongs to.
            sets.put(f, l.sets().stream().filter(s -> !s.has(NfTablesUapi.NFT_SET_ANONYMOUS)
                    && Generation.of(s.name()).equals(g)).toList());
        });
        sets.forEach((f, list) -> {
            for (NftSet s : list) {
                List<Bytes> keys = s.has(NfTablesUapi.NFT_SET_INTERVAL) ? null
                        : keysOf.apply(f, Generation.original(s.name()));
                if (keys == null) {
                    continue;
                }
                for (int i = 0; i < keys.size(); i += limit) {
                    List<SetElement> chunk = new ArrayList<>();
                    for (Bytes k : keys.subList(i, Math.min(keys.size(), i + limit))) {
                        chunk.add(SetElement.of(k));
                    }
                    out.add(chunk.size(), tx -> tx.destroy(new Elements(s.family(), s.table(), s.name(), chunk)));
                }
            }
        });
        chains.forEach((f, list) -> list.forEach(c -> {
            Integer rules = rulesOf.apply(f, Generation.original(c.name()));
            out.add(Math.max(1, rules == null ? 1 : rules), tx -> tx.flush(c));
        }));
        sets.values().forEach(list -> list.forEach(s -> out.add(1, tx -> tx.delete(s))));
        chains.values().forEach(list -> list.forEach(c -> out.add(1, tx -> tx.delete(c))));
        return out.done();
    }
}
