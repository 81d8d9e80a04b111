package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftKernel;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.render.Transitions;

/**
 * The syncer's central promise, as a property over random histories: whatever sequence of model
 * changes arrives (services and endpoints added, removed and changed, policies and source ranges changed, the node's
 * zone and the service network changed, syncs failing midway and being retried as the sync loop retries them), the table
 * that partial syncs leave equals the table one full sync of the final model makes. Runs against
 * {@link FakeNfTables}, without privileges; seed with -Dnftproxy.seed=N to replay a failure.
 */
class PartialSyncPropertyTest {
    static final ProxyConfig CFG = ProxyConfig.builder("node-a").nodeIPs(List.of(ip("192.168.50.2"), ip("fd00:50::2")))
            .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).minSyncPeriod(Duration.ZERO).build();

    static InetAddress ip(String s) {
        return Inet.parse(s);
    }

    /** The node's zone label: present, absent (no label) or empty. */
    static final List<String> ZONES = Arrays.asList("z1", "z2", null, "");

    /** A mutable model the history changes; {@link #state()} freezes it. */
    static final class Model {
        final TreeMap<ServicePortName, ServicePort> services = new TreeMap<>();
        final Map<ServicePortName, List<Endpoint>> endpoints = new HashMap<>();
        String zone = "z1";
        List<Cidr> serviceCidrs = List.of();

        ProxyState state() {
            return new ProxyState(services, endpoints, new NodeInfo("node-a", zone, List.of(ip("192.168.50.2")), false),
                    serviceCidrs);
        }
    }

    static ServicePortName id(int i) {
        return new ServicePortName("ns", "svc-" + i, "p", i % 4 == 3 ? Protocol.UDP : Protocol.TCP);
    }

    static ServicePort service(Random r, int i) {
        boolean six = i % 5 == 4;
        InetAddress cip = ip(six ? "fd00:96::" + Integer.toHexString(i + 1) : "10.96.0." + (i + 1));
        int nodePort = r.nextInt(3) == 0 ? 30000 + i : 0;
        List<InetAddress> external = r.nextInt(4) == 0 ? List.of(ip(six ? "2001:db8::" + (i + 1) : "203.0.113." + (i + 1))) : List.of();
        List<InetAddress> lb = r.nextInt(4) == 0 ? List.of(ip(six ? "2001:db8:1::" + (i + 1) : "198.51.100." + (i + 1))) : List.of();
        List<Cidr> ranges = new ArrayList<>();
        for (Cidr c : RANGES) {
            if (!lb.isEmpty() && r.nextInt(3) == 0) {
                ranges.add(c);
            }
        }
        boolean eLocal = (nodePort != 0 || !external.isEmpty() || !lb.isEmpty()) && r.nextBoolean();
        return ServicePort.builder(id(i), 80 + r.nextInt(2)).clusterIPs(List.of(cip)).nodePort(nodePort)
                .externalIPs(external).loadBalancerIPs(lb).loadBalancerSourceRanges(ranges)
                .externalPolicyLocal(eLocal).internalPolicyLocal(r.nextInt(5) == 0)
                .affinitySeconds(r.nextInt(5) == 0 ? 600 : 0).build();
    }

    /** Source ranges to draw from: nested ones, one holding the node, both families. */
    static final List<Cidr> RANGES = List.of(Cidr.parse("10.0.0.0/8"), Cidr.parse("10.1.0.0/16"),
            Cidr.parse("192.168.50.0/24"), Cidr.parse("172.16.0.0/12"), Cidr.parse("fd00::/8"), Cidr.parse("fd00:50::/64"));

    static Endpoint endpoint(Random r, boolean six, int n) {
        String addr = six ? "fd00:244::" + Integer.toHexString(n) : "10.244." + (n / 250) + "." + (n % 250 + 1);
        int flags = r.nextInt(6);
        boolean ready = flags > 1;
        boolean terminating = flags == 1 || flags == 5;
        String node = r.nextBoolean() ? "node-a" : "node-b";
        return Endpoint.builder(ip(addr), 8080).node(node).ready(ready).serving(ready || terminating)
                .terminating(terminating).zoneHints(zoneHints(r))
                .nodeHints(r.nextInt(5) == 0 ? Set.of(r.nextBoolean() ? node : "node-c") : null).build();
    }

    /**
     * Zone hints on some endpoints only, for this node's zone, another one, or one no node is in;
     * the node's zone itself is sometimes absent or empty ({@link #ZONES}).
     */
    static Set<String> zoneHints(Random r) {
        return switch (r.nextInt(8)) {
            case 0 -> Set.of("z1");
            case 1 -> Set.of("z2");
            case 2 -> Set.of("z9"); // no node is in z9
            case 3 -> Set.of("z1", "z2");
            default -> null;
        };
    }

    /** The cluster's ServiceCIDRs (no --service-cidr overrides them) come from these: overlapping, adjacent (they merge) and apart, of both families. */
    static final List<Cidr> SERVICE_CIDRS = List.of(Cidr.parse("10.96.0.0/16"), Cidr.parse("10.97.0.0/16"),
            Cidr.parse("10.98.0.0/16"), Cidr.parse("10.96.128.0/17"), Cidr.parse("10.100.0.0/24"), Cidr.parse("fd00:96::/112"),
            Cidr.parse("fd00:98::/112"));

    static List<Cidr> someOf(Random r, List<Cidr> all) {
        List<Cidr> out = new ArrayList<>();
        for (Cidr c : all) {
            if (r.nextInt(3) == 0) {
                out.add(c);
            }
        }
        return out;
    }

    /** One random change; returns the service port it touched (null: the node or the service network). */
    static ServicePortName mutate(Random r, Model m, int[] counter) {
        int i = r.nextInt(12);
        ServicePortName id = id(i);
        boolean six = i % 5 == 4;
        switch (r.nextInt(8)) {
            case 0, 1 -> m.services.put(id, service(r, i));
            case 2 -> {
                m.services.remove(id);
                m.endpoints.remove(id);
            }
            case 3, 4 -> {
                List<Endpoint> eps = new ArrayList<>(m.endpoints.getOrDefault(id, List.of()));
                if (r.nextInt(10) == 0) {
                    // A large group: about two thirds of it ready and half of that on this
                    // node, so its counts fall below the shared tree or in one of its blocks,
                    // which are declared and dropped as ports cross them.
                    eps.clear();
                    int n = NftRenderer.MAX_SHARED_PICK + r.nextInt(3 * NftRenderer.MAX_SHARED_PICK);
                    for (int j = 0; j < n; j++) {
                        eps.add(endpoint(r, six, ++counter[0]));
                    }
                } else {
                    eps.add(endpoint(r, six, ++counter[0]));
                }
                m.endpoints.put(id, eps);
            }
            case 5 -> {
                List<Endpoint> eps = new ArrayList<>(m.endpoints.getOrDefault(id, List.of()));
                if (!eps.isEmpty()) {
                    eps.remove(r.nextInt(eps.size()));
                }
                m.endpoints.put(id, eps);
            }
            case 6 -> {
                m.serviceCidrs = someOf(r, SERVICE_CIDRS);
                return null;
            }
            default -> {
                m.zone = ZONES.get(r.nextInt(ZONES.size()));
                return null;
            }
        }
        return id;
    }

    /**
     * Our tables printed as {@link #normalized}, in the renderer's names: a rebuild takes the table
     * over under the other generation's names (Generation). Fails when sets and chains of both
     * generations are there.
     */
    static String tables(NftKernel k) throws NftException {
        StringBuilder sb = new StringBuilder();
        for (Family f : List.of(Family.IP, Family.IP6)) {
            if (k.hasTable(f, "nftproxy")) {
                TableContents t = k.readTable(f, "nftproxy");
                Set<Generation> seen = new TreeSet<>(Comparator.comparingInt(Generation::number));
                t.chains().stream().filter(c -> !c.isBase()).forEach(c -> seen.add(Generation.of(c.name())));
                t.sets().forEach(s -> seen.add(Generation.of(s.name())));
                assertTrue(seen.size() <= 1, () -> "sets and chains of both generations in table " + f.keyword() + ":\n" + t);
                sb.append(normalized(t));
            } else {
                sb.append("(no " + f.keyword() + " table)\n");
            }
        }
        return sb.toString().replace(Generation.SUFFIX, "");
    }

    /**
     * The table printed with its chains and sets in name order (the renderer's): the kernel lists
     * them in the order they were created, which differs between histories and means nothing.
     * Rules keep their order within a chain, which means everything.
     */
    static String normalized(TableContents t) {
        return new TableContents(t.table(),
                t.chains().stream().sorted(Comparator.comparing(c -> Generation.original(c.name()))).toList(),
                t.sets().stream().sorted(Comparator.comparing(s -> Generation.original(s.name()))).toList(),
                t.elements(), t.rules()).toString();
    }

    /** Replays one history through partial syncs; returns the seed's history text on disagreement. */
    static void history(long seed, int steps) throws Exception {
        Random r = new Random(seed);
        Model m = new Model();
        int[] counter = {0};
        FakeNfTables fake = new FakeNfTables();
        Syncer syncer = new Syncer(fake, new NftRenderer(CFG), "nftproxy");
        long[] now = {0};
        syncer.clock(() -> now[0]);
        Set<ServicePortName> changed = new HashSet<>();
        boolean full = true;
        for (int s = 0; s < steps; s++) {
            ServicePortName touched = mutate(r, m, counter);
            if (touched != null) {
                changed.add(touched);
            }
            if (r.nextInt(3) == 0) {
                boolean inject = r.nextInt(10) == 0;
                if (inject) {
                    fake.failNextCommit(new NftException("injected failure", 5, null));
                }
                try {
                    syncer.sync(m.state(), full ? null : Set.copyOf(changed));
                    changed.clear();
                    full = r.nextInt(15) == 0; // now and then a periodic full sync
                } catch (NftException e) {
                    if (!inject) {
                        throw new AssertionError("history " + seed + " (replay: -Dnftproxy.seed=" + seed
                                + "): the fake refused a sync: " + e.getMessage(), e);
                    }
                    // As the sync loop does: forget, and retry with a full sync.
                    syncer.forgetCommitted();
                    full = true;
                }
            }
        }
        syncer.sync(m.state(), full ? null : Set.copyOf(changed));
        // What the changes kept for packets crossing their commits goes after its time, as the sync loop takes it away.
        now[0] += Transitions.GRACE.toNanos();
        SyncResult last = syncer.sync(m.state(), Set.of());
        FakeNfTables fresh = new FakeNfTables();
        Syncer fullSync = new Syncer(fresh, new NftRenderer(CFG), "nftproxy");
        fullSync.takeIndicesFrom(syncer); // endpoints keep the indices history gave them
        SyncResult once = fullSync.sync(m.state(), null);
        assertEquals(tables(fresh), tables(fake), "partial syncs of history " + seed + " (replay: -Dnftproxy.seed=" + seed
                + ") left another table than one full sync of its final model");
        // The counts kept as chains come and go agree with a count of one full sync.
        assertEquals(List.of(once.chains(), once.rules(), once.elements()), List.of(last.chains(), last.rules(), last.elements()),
                "chains, rules, elements after history " + seed);
    }

    /** One seeded history of a property test. */
    @FunctionalInterface
    interface History {
        void run(long seed) throws Exception;
    }

    /**
     * Runs -Dnftproxy.histories (2,000) histories from a random seed, or the one history of
     * -Dnftproxy.seed to replay a failure: each history's failure names its seed.
     */
    static void histories(History h) throws Exception {
        String fixed = System.getProperty("nftproxy.seed");
        long base = fixed != null ? Long.parseLong(fixed) : new Random().nextLong();
        int histories = fixed != null ? 1 : Integer.getInteger("nftproxy.histories", 2_000);
        for (int i = 0; i < histories; i++) {
            h.run(base + i);
        }
    }

    @Test
    void partialSyncsAlwaysReachTheTableOfAFullSync() throws Exception {
        histories(seed -> history(seed, 40));
    }
}
