package io.nftproxy.proxy.iptables;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.LbAlgorithm;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.sync.Backend;
import io.nftproxy.proxy.sync.SyncResult;

/**
 * Applies the reference ruleset with {@code iptables-restore --noflush}: only our chains are
 * declared (so flushed and rewritten), chains of ours that went away are deleted, and the jumps
 * from the built-in chains are ensured once. Every sync is full: this is the reference, not the
 * fast path.
 */
public final class IptablesSyncer implements Backend {
    private static final Logger LOG = LoggerFactory.getLogger(IptablesSyncer.class);
    private final IptablesRenderer renderer;
    private final String netns;
    private final CommandRunner runner;

    /** Runs a command to its end: its stdout, or an IllegalStateException carrying its stderr. */
    @FunctionalInterface
    public interface CommandRunner {
        String run(List<String> cmd, String stdin);
    }
    /** Our chains in the nat and filter tables after the last sync. */
    private record Chains(Set<String> nat, Set<String> filter) {
    }

    private final Map<IpFamily, Chains> committed = new EnumMap<>(IpFamily.class);
    private boolean jumpsEnsured;
    /** Per family and table, the rules the last sync wrote (every sync writes all of ours). */
    private volatile Map<IpFamily, Map<String, Integer>> rulesWritten = Map.of();

    /** @param netns the network namespace's name, or null for ours */
    public IptablesSyncer(ProxyConfig config, String netns) {
        this(config, netns, Commands::run);
    }

    /** With another way to run iptables-restore, iptables-save and iptables (tests record them). */
    public IptablesSyncer(ProxyConfig config, String netns, CommandRunner runner) {
        this.renderer = new IptablesRenderer(config);
        this.netns = netns;
        this.runner = runner;
    }

    private List<String> cmd(String... c) {
        return Commands.in(netns, List.of(c));
    }

    private static String tool(IpFamily f, String base) {
        return f == IpFamily.V4 ? base : base.replace("iptables", "ip6tables");
    }

    @Override
    public boolean needsFull() {
        return true;
    }

    /** The service ports told that this mode does not hash (service.nftproxy.io/lb-algorithm): once each. */
    private final Set<ServicePortName> toldRandom = new HashSet<>();

    /**
     * kube-proxy's iptables layout has no hash: a port whose Service asks for one picks at
     * random, said once per port while it asks.
     */
    private void tellWhoAsksForAHash(ProxyState state) {
        toldRandom.removeIf(id -> state.services().get(id) == null || !state.services().get(id).algorithm().hashed());
        state.services().forEach((id, p) -> {
            if (p.algorithm().hashed() && toldRandom.add(id)) {
                LOG.warn("service port {} asks for {} {}: --mode iptables picks its endpoints at random", id,
                        LbAlgorithm.ANNOTATION, p.algorithm().value());
            }
        });
    }

    @Override
    public SyncResult sync(ProxyState state, Set<ServicePortName> changed) {
        tellWhoAsksForAHash(state);
        long t0 = System.nanoTime();
        int chains = 0;
        int rules = 0;
        long bytes = 0;
        List<String> rejected = new ArrayList<>();
        Map<IpFamily, Map<String, Integer>> written = new EnumMap<>(IpFamily.class);
        for (IpFamily f : IpFamily.values()) {
            IptablesRenderer.Output out = renderer.render(state, f);
            rejected.addAll(out.rejected());
            StringBuilder restore = new StringBuilder(out.restore());
            // Chains of ours that are gone: declare (which flushes) and delete them.
            Chains before = committed.get(f);
            if (before == null) {
                // A fresh process does not know what an earlier one created: as kube-proxy does,
                // read the service chains that exist and delete those the new ruleset lacks.
                before = existingServiceChains(f);
            }
            if (before != null) {
                String stale = staleBlock("nat", before.nat(), out.natChains()) + staleBlock("filter", before.filter(),
                        out.filterChains());
                restore.append(stale);
            }
            if (!jumpsEnsured) {
                // Our chains must exist before the built-in chains can jump to them.
                runner.run(cmd(tool(f, "iptables-restore"), "-w", "--noflush"), out.restore());
                ensureJumps(f);
            }
            runner.run(cmd(tool(f, "iptables-restore"), "-w", "--noflush"), restore.toString());
            committed.put(f, new Chains(new HashSet<>(out.natChains()), new HashSet<>(out.filterChains())));
            chains += out.natChains().size() + out.filterChains().size();
            Map<String, Integer> byTable = rulesByTable(out.restore());
            written.put(f, byTable);
            rules += byTable.values().stream().mapToInt(Integer::intValue).sum();
            bytes += restore.length();
        }
        jumpsEnsured = true;
        rulesWritten = written;
        long took = System.nanoTime() - t0;
        return new SyncResult(true, new CommitStats(rules, 0, bytes, 0, took), chains, chains, rules, 0, rejected, 0);
    }

    /** The rules ({@code -A} lines) of an iptables-restore input, by table. */
    static Map<String, Integer> rulesByTable(String restore) {
        Map<String, Integer> out = new TreeMap<>();
        String table = null;
        for (String line : restore.split("\n")) {
            if (line.startsWith("*")) {
                table = line.substring(1).trim();
                out.putIfAbsent(table, 0);
            } else if (line.startsWith("-A ") && table != null) {
                out.merge(table, 1, Integer::sum);
            }
        }
        return out;
    }

    /**
     * kube-proxy's {@code sync_proxy_rules_iptables_total} and {@code _last} of a family and table:
     * the rules we own there, which here are also those the last sync wrote (it writes them all).
     */
    public int rules(IpFamily f, String table) {
        return rulesWritten.getOrDefault(f, Map.of()).getOrDefault(table, 0);
    }

    /** Service chains (KUBE-SVC-, -SVL-, -EXT-, -FW-, -SEP-) in the kernel now, by table. */
    private Chains existingServiceChains(IpFamily f) {
        Set<String> nat = new HashSet<>();
        Set<String> filter = new HashSet<>();
        String table = null;
        for (String line : runner.run(cmd(tool(f, "iptables-save")), null).split("\n")) {
            if (line.startsWith("*")) {
                table = line.substring(1);
            } else if (line.startsWith(":") && isServiceChain(line.substring(1, Math.max(1, line.indexOf(' '))))) {
                String chain = line.substring(1, line.indexOf(' '));
                if ("nat".equals(table)) {
                    nat.add(chain);
                } else if ("filter".equals(table)) {
                    filter.add(chain);
                }
            }
        }
        return new Chains(nat, filter);
    }

    private static boolean isServiceChain(String c) {
        return c.startsWith("KUBE-SVC-") || c.startsWith("KUBE-SVL-") || c.startsWith("KUBE-EXT-")
                || c.startsWith("KUBE-FW-") || c.startsWith("KUBE-SEP-");
    }

    private static String staleBlock(String table, Set<String> before, Set<String> now) {
        List<String> gone = new ArrayList<>();
        for (String c : before) {
            if (!now.contains(c)) {
                gone.add(c);
            }
        }
        if (gone.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder("*" + table + "\n");
        gone.forEach(c -> sb.append(':').append(c).append(" - [0:0]\n"));
        gone.forEach(c -> sb.append("-X ").append(c).append('\n'));
        return sb.append("COMMIT\n").toString();
    }

    /**
     * kube-proxy's canary: an empty chain KUBE-PROXY-CANARY in the mangle, nat and filter tables.
     * Whoever flushes or deletes a table's chains (a firewall restarting, iptables -F -X) takes it
     * with ours; {@link #canariesPresent} tells, and a full resync puts everything back.
     */
    static final String CANARY = "KUBE-PROXY-CANARY";
    static final List<String> CANARY_TABLES = List.of("mangle", "nat", "filter");

    private void ensureCanaries(IpFamily f) {
        for (String table : CANARY_TABLES) {
            try {
                runner.run(cmd(tool(f, "iptables"), "-w", "-t", table, "-N", CANARY), null);
            } catch (IllegalStateException exists) {
                // there already
            }
        }
    }

    /** Whether every canary chain is still there, in both families; checked every sync period, as kube-proxy does. */
    public boolean canariesPresent() {
        for (IpFamily f : IpFamily.values()) {
            for (String table : CANARY_TABLES) {
                try {
                    runner.run(cmd(tool(f, "iptables"), "-w", "-t", table, "-S", CANARY), null);
                } catch (IllegalStateException gone) {
                    return false;
                }
            }
        }
        return true;
    }

    /** After a canary went: what we committed may be gone too; the next sync restores all, jumps and canaries included. */
    @Override
    public void forgetCommitted() {
        committed.clear();
        jumpsEnsured = false;
    }

    private void ensureJumps(IpFamily f) {
        ensureCanaries(f);
        for (List<String> j : IptablesRenderer.JUMPS) {
            List<String> rule = j.subList(2, j.size());
            List<String> check = new ArrayList<>(cmd(tool(f, "iptables"), "-w", "-t", j.get(0), "-C", j.get(1)));
            check.addAll(rule);
            try {
                runner.run(check, null);
            } catch (IllegalStateException missing) {
                List<String> add = new ArrayList<>(cmd(tool(f, "iptables"), "-w", "-t", j.get(0), "-A", j.get(1)));
                add.addAll(rule);
                runner.run(add, null);
            }
        }
    }

    /** Removes the jumps and every chain of ours, in both families. */
    public void cleanup() {
        for (IpFamily f : IpFamily.values()) {
            for (List<String> j : IptablesRenderer.JUMPS) {
                List<String> del = new ArrayList<>(cmd(tool(f, "iptables"), "-w", "-t", j.get(0), "-D", j.get(1)));
                del.addAll(j.subList(2, j.size()));
                try {
                    runner.run(del, null);
                } catch (IllegalStateException absent) {
                    // not there
                }
            }
            String saved = runner.run(cmd(tool(f, "iptables-save")), null);
            StringBuilder sb = new StringBuilder();
            String table = null;
            List<String> ours = new ArrayList<>();
            for (String line : saved.split("\n")) {
                if (line.startsWith("*")) {
                    table = line.substring(1);
                    ours.clear();
                } else if (line.startsWith(":KUBE-")) {
                    ours.add(line.substring(1, line.indexOf(' ')));
                } else if (line.equals("COMMIT") && !ours.isEmpty()) {
                    sb.append('*').append(table).append('\n');
                    ours.forEach(c -> sb.append(':').append(c).append(" - [0:0]\n"));
                    ours.forEach(c -> sb.append("-X ").append(c).append('\n'));
                    sb.append("COMMIT\n");
                }
            }
            if (sb.length() > 0) {
                runner.run(cmd(tool(f, "iptables-restore"), "-w", "--noflush"), sb.toString());
            }
        }
        committed.clear();
        jumpsEnsured = false;
    }
}
