package io.nftproxy.proxy.nodesetup;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.proxy.iptables.Commands;

/**
 * kube-proxy's iptables-mode chains where iptables-legacy keeps them (x_tables, out of nf_tables'
 * reach): read with {@code iptables-legacy-save} and removed with {@code iptables-legacy-restore
 * --noflush}, the way {@link KubeProxyLeftovers} removes the same chains from iptables-nft's
 * tables. A node whose kube-proxy image chose iptables-legacy (its wrapper picks the variant that
 * already holds rules) keeps them there; left behind, they go on handling service traffic.
 *
 * <p>Nothing runs unless the legacy tools are installed, and the restore runs only when there is
 * something to remove: the save reads only the tables that are already loaded, the restore would
 * load x_tables' modules.
 */
public final class LegacyIptablesLeftovers {
    private static final Logger LOG = LoggerFactory.getLogger(LegacyIptablesLeftovers.class);

    private LegacyIptablesLeftovers() {
    }

    /**
     * The {@code iptables-restore --noflush} input that removes kube-proxy's chains from the
     * tables in {@code save} (iptables-save's output), or "" when there are none. A pure function:
     * the rules that jump or go to one of kube-proxy's chains from a chain that stays are deleted
     * (their specification as saved), then kube-proxy's chains are flushed (a chain line flushes a
     * user chain under --noflush) and deleted. The kubelet's chains and every other rule stay.
     */
    public static String plan(String save) {
        StringBuilder out = new StringBuilder();
        String table = null;
        Set<String> gone = new HashSet<>();
        List<String> rules = new ArrayList<>();
        for (String line : save.lines().toList()) {
            if (line.startsWith("*")) {
                table = line.substring(1).trim();
                gone.clear();
                rules.clear();
            } else if (line.startsWith(":") && table != null) {
                String chain = line.substring(1).split(" ", 2)[0];
                if (KubeProxyLeftovers.isKubeProxyChain(chain)) {
                    gone.add(chain);
                }
            } else if (line.startsWith("-A ") && table != null) {
                rules.add(line);
            } else if (line.equals("COMMIT") && table != null) {
                if (!gone.isEmpty()) {
                    out.append('*').append(table).append('\n');
                    for (String rule : rules) {
                        String[] words = rule.split(" ");
                        if (!gone.contains(words[1]) && targets(words, gone)) {
                            out.append("-D ").append(rule.substring(3)).append('\n');
                        }
                    }
                    gone.stream().sorted().forEach(c -> out.append(':').append(c).append(" - [0:0]\n"));
                    gone.stream().sorted().forEach(c -> out.append("-X ").append(c).append('\n'));
                    out.append("COMMIT\n");
                }
                table = null;
            }
        }
        return out.toString();
    }

    private static boolean targets(String[] words, Set<String> chains) {
        for (int i = 2; i + 1 < words.length; i++) {
            if ((words[i].equals("-j") || words[i].equals("-g")) && chains.contains(words[i + 1])) {
                return true;
            }
        }
        return false;
    }

    /**
     * Removes kube-proxy's legacy chains in the named network namespace (null: ours), for IPv4 and
     * IPv6, saying what went; a failure is said as a warning (the proxy's own rules are in place).
     */
    public static void remove(String netns) {
        for (String tool : List.of("iptables", "ip6tables")) {
            if (!Commands.onPath(tool + "-legacy-save") || !Commands.onPath(tool + "-legacy-restore")) {
                continue;
            }
            try {
                String restore = plan(Commands.run(Commands.in(netns, List.of(tool + "-legacy-save")), null));
                if (restore.isEmpty()) {
                    continue;
                }
                Commands.run(Commands.in(netns, List.of(tool + "-legacy-restore", "--noflush")), restore);
                long chains = restore.lines().filter(l -> l.startsWith("-X ")).count();
                LOG.info("removed what kube-proxy left in {}-legacy: {} chains (and the rules jumping to them)", tool, chains);
            } catch (IllegalStateException e) {
                LOG.warn("could not remove what kube-proxy left in {}-legacy (its rules may still handle service traffic;"
                        + " run kube-proxy --cleanup with kube-proxy's image): {}", tool, e.getMessage());
            }
        }
    }
}
