package io.nftproxy.tools.bench;

import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.sync.Syncer;

/**
 * How long reading our tables back from the kernel takes, with reads that take no lock that
 * anyone else waits on (dumps and keyed element requests run under RCU): what restarting onto
 * the table of a previous run would cost if it first learned what that table holds (issue #22,
 * item 1). A set the syncer holds fewer than {@code dumpBelow} elements of is dumped (the
 * kernel restarts its walk for every message, so a dump grows with the square of the set);
 * a larger one (not an interval set) is read by the keys the syncer holds. Chains are listed, and each chain's rules.
 */
public final class ReadBack {
    private ReadBack() {
    }

    /** Elements read and held, and where the time went (nanoseconds). */
    public record Figures(long elementsRead, long elementsHeld, long rules, long dumpNanos, long byKeyNanos,
                          long chainNanos, String largest) {
        public long totalNanos() {
            return dumpNanos + byKeyNanos + chainNanos;
        }

        @Override
        public String toString() {
            return String.format("%d of %d held elements and %d rules read back in %.0f ms (sets dumped %.0f ms, read by"
                    + " key %.0f ms, chains and their rules %.0f ms; the slowest set: %s)", elementsRead, elementsHeld, rules,
                    totalNanos() / 1e6, dumpNanos / 1e6, byKeyNanos / 1e6, chainNanos / 1e6, largest);
        }
    }

    public static Figures measure(NftClient client, Syncer syncer, String table, int dumpBelow) throws NftException {
        long read = 0;
        long held = 0;
        long rules = 0;
        long dump = 0;
        long byKey = 0;
        long chains = 0;
        long slowest = -1;
        String largest = "none";
        for (IpFamily f : IpFamily.values()) {
            if (!client.hasTable(f.nft(), table)) {
                continue; // a family the node does not use has no table
            }
            long c0 = System.nanoTime();
            for (Chain c : client.listChains(f.nft(), table)) {
                rules += client.listRules(f.nft(), table, c.name()).size();
            }
            chains += System.nanoTime() - c0;
            for (NftSet s : client.listSets(f.nft(), table)) {
                int count = syncer.heldCount(f, s.name());
                held += count;
                // An interval set is dumped whatever its size: the kernel answers a key with the
                // interval holding it, not with the start and end elements held.
                boolean keyed = count >= dumpBelow && !s.has(NfTablesUapi.NFT_SET_INTERVAL);
                long t0 = System.nanoTime();
                int got = keyed ? client.countedElements(f.nft(), table, s.name(), syncer.heldKeys(f, s.name())).size()
                        : client.listElements(f.nft(), table, s.name()).size();
                long took = System.nanoTime() - t0;
                if (keyed) {
                    byKey += took;
                } else {
                    dump += took;
                }
                read += got;
                if (took > slowest) {
                    slowest = took;
                    largest = String.format("%s %s, %d elements %s, %.0f ms", f.nft().keyword(), s.name(), got,
                            keyed ? "by key" : "dumped", took / 1e6);
                }
            }
        }
        return new Figures(read, held, rules, dump, byKey, chains, largest);
    }
}
