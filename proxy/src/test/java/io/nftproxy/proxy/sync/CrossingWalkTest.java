package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.TableContents;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.print.NftPrinter;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.MapKeys;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.render.Transitions;

/**
 * A connection's first packet crossing each commit of a long random history, walked over the
 * table as the kernel would walk it: the rules of the generation before the commit, each set read
 * before the flip as it was and each one after as it is now, for every place the flip can fall,
 * through every tree (ClusterIP and NodePort, over all endpoints and over this node's). Whatever
 * index its last level draws is held and maps to an endpoint of the old or the new set; a packet
 * that crosses nothing reaches only the current endpoints. The history changes the count across
 * bits, buckets and blocks, takes the port away and back, hands its frontends to a renamed port
 * in the same sync, toggles policy Local and affinity, changes a neighbour's count (the trees'
 * shape) and lets the transitional elements' time pass now and then.
 */
class CrossingWalkTest {
    static final Pattern SET = Pattern.compile("@(\\S+)");
    static final Pattern GOTO = Pattern.compile("goto (\\S+)$");
    static final Pattern DRAW = Pattern.compile("mod (\\d+) map @(\\S+)");
    static final Pattern VMAP = Pattern.compile("vmap @(\\S+)");
    static final List<String> ROOTS = List.of("ip-pick-1-128", "nodeport-pick-1-128", "ip-local-pick-1-128",
            "nodeport-local-pick-1-128");
    static final ServicePortName WEB = SyncSpecificationTest.WEB;
    static final ServicePortName RENAMED = new ServicePortName("shop", "web", "web2", Protocol.TCP);
    static final ServicePortName OTHER = new ServicePortName("shop", "other", "http", Protocol.TCP);
    static final Bytes CLUSTER_IP = MapKeys.frontend(Inet.parse("10.96.0.10"), 6, 80);
    static final Bytes NODE_PORT = MapKeys.nodePort(6, 30080);

    /** A table as the walk reads it: each chain's rules as nft text, each set's keys to values (a verdict's chain in {@code verdicts}). */
    record View(Map<String, List<String>> chains, Map<String, Map<Bytes, Bytes>> sets, Map<Bytes, String> verdicts) {
        static View of(TableContents t) {
            Map<String, NftSet> defs = new HashMap<>();
            t.sets().forEach(s -> defs.put(s.name(), s));
            Map<String, List<String>> chains = new HashMap<>();
            t.chains().forEach(c -> chains.put(c.name(), new ArrayList<>()));
            for (Rule r : t.rules()) {
                chains.get(r.chain()).add(NftPrinter.ruleBody(r, defs::get));
            }
            Map<String, Map<Bytes, Bytes>> sets = new HashMap<>();
            Map<Bytes, String> verdicts = new HashMap<>();
            t.sets().forEach(s -> sets.put(s.name(), new HashMap<>()));
            t.elements().forEach((s, els) -> {
                for (SetElement e : els) {
                    sets.get(s).put(e.key(), e.data() instanceof Data.Value v ? v.bytes() : Bytes.of());
                    if (e.data() instanceof Verdict v && v.chain() != null) {
                        verdicts.put(Bytes.concat(Bytes.of(s.getBytes(java.nio.charset.StandardCharsets.UTF_8)), e.key()), v.chain());
                    }
                }
            });
            return new View(chains, sets, verdicts);
        }

        /** The chain a verdict map's element for {@code key} goes to, or null. */
        String verdict(String set, Bytes key) {
            return verdicts.get(Bytes.concat(Bytes.of(set.getBytes(java.nio.charset.StandardCharsets.UTF_8)), key));
        }

        boolean member(String set, Bytes key) {
            return sets.containsKey(set) && sets.get(set).containsKey(key);
        }

        /** Whether the frontend enters some tree: when it enters none, the filter chains answer it. */
        boolean picks(Bytes front) {
            return ROOTS.stream().anyMatch(root -> enters(root, front));
        }

        /** Whether the frontend enters the tree at {@code root} (the sets the tree's callers ask). */
        boolean enters(String root, Bytes front) {
            // Past 1,024 endpoints a verdict element sends the frontend to its block instead.
            return switch (root) {
                case "ip-pick-1-128" -> member("service-ips", front) && !member("local-ips", front)
                        && !member("service-chains", front);
                case "nodeport-pick-1-128" -> (member("service-nodeports", front) || member("local-nodeports", front))
                        && !member("nodeport-chains", front) && !member("nodeport-external-local-blocks", front);
                case "ip-local-pick-1-128" -> member("local-ips", front) && !member("no-local-endpoint", front);
                default -> member("local-nodeports", front) && !member("nodeport-no-local-endpoint", front);
            };
        }
    }

    /** Counts over a run: last levels reached, and those reached by a walk that crossed the flip. */
    static final class Tally {
        long leaves;
        long crossed;
        /** Walks that missed after the flip a frontend the new generation picks for nowhere: answered as after the commit. */
        long answeredAfter;
        final List<String> problems = new ArrayList<>();
    }

    /**
     * Walks the tree at {@code root} through {@code old}'s rules, the first {@code flip} set reads
     * in {@code old} and the rest (the endpoint map's lookup too) in {@code neu}, and checks every
     * index the last level can draw. A packet that finds nothing for a frontend that picks through
     * no tree in {@code neu} (its port gone or without endpoints) leaves the tree without a DNAT and
     * is answered by the new generation's filter chains, as after the commit ({@link Transitions}).
     */
    static void walk(View old, View neu, String root, Bytes front, int flip, Set<Bytes> allowed, String what, Tally t) {
        int reads = 0;
        String chain = root;
        for (int depth = 0; depth < 40; depth++) {
            String next = null;
            for (String body : old.chains.getOrDefault(chain, List.of())) {
                if (body.contains("jump ") || body.contains("fib daddr")) {
                    continue; // the sticky check (returns when it finds no client), masquerade marks, NodePorts
                }
                if (body.endsWith(" return")) {
                    // services' first rule: a packet to none of the frontends it sends on leaves.
                    Matcher set = SET.matcher(body);
                    set.find();
                    if (!(reads++ < flip ? old : neu).member(set.group(1), front)) {
                        if (!neu.picks(front) && reads > flip) {
                            t.answeredAfter++;
                        } else {
                            t.problems.add(what + ", flip after " + flip + " reads: left " + chain + " un-NATed");
                        }
                        return;
                    }
                    continue;
                }
                Matcher vmap = VMAP.matcher(body);
                if (vmap.find()) {
                    View read = reads++ < flip ? old : neu;
                    String to = read.verdict(vmap.group(1), front);
                    if (to == null) {
                        continue;
                    }
                    next = to;
                    break;
                }
                Matcher draw = DRAW.matcher(body);
                if (draw.find()) {
                    Matcher set = SET.matcher(body);
                    set.find();
                    if (!set.group(1).equals(draw.group(2)) && !(reads++ < flip ? old : neu).member(set.group(1), front)) {
                        continue; // the last level's bit-0 test
                    }
                    int k = Integer.parseInt(draw.group(1));
                    View looked = reads < flip ? old : neu;
                    t.leaves++;
                    t.crossed += reads >= flip && flip > 0 ? 1 : 0;
                    for (int i = 0; i < k; i++) {
                        Bytes ep = looked.sets.getOrDefault(draw.group(2), Map.of()).get(Bytes.concat(front, Bytes.host32(i)));
                        if (ep == null && looked == neu && !neu.picks(front)) {
                            t.answeredAfter++;
                            return;
                        }
                        if (ep == null || !allowed.contains(ep)) {
                            t.problems.add(what + ", flip after " + flip + " reads: index " + i + " of " + k + " in "
                                    + draw.group(2) + (ep == null ? " missing" : " maps to " + ep + ", no endpoint of the old or new set"));
                        }
                    }
                    return;
                }
                Matcher go = GOTO.matcher(body);
                if (!go.find()) {
                    continue;
                }
                Matcher set = SET.matcher(body);
                if (set.find() && !(reads++ < flip ? old : neu).member(set.group(1), front)) {
                    continue;
                }
                next = go.group(1);
                break;
            }
            if (next == null && !neu.picks(front) && reads > flip) {
                t.answeredAfter++;
                return;
            }
            if (next == null) {
                t.problems.add(what + ", flip after " + flip + " reads: fell off " + chain);
                return;
            }
            if (!next.contains("-pick-") && !next.startsWith("ip-external-local") && !next.startsWith("nodeport-external-local")) {
                return; // chains of the port's own (sticky past 1,024): written whole with each change, not walked here
            }
            chain = next;
        }
        t.problems.add(what + ": no last level within 40 chains");
    }

    static ServicePort web(ServicePortName id, boolean local, int affinity) {
        return ServicePort.builder(id, 80).clusterIPs(List.of(Inet.parse("10.96.0.10"))).nodePort(30080)
                .externalPolicyLocal(local).affinitySeconds(affinity).build();
    }

    static Set<Bytes> keys(List<Endpoint> eps) {
        Set<Bytes> out = new HashSet<>();
        eps.forEach(e -> out.add(MapKeys.endpoint(e.ip(), e.port())));
        return out;
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void everyCrossingPacketFindsAnEndpointOfTheOldOrTheNewSet(long seed) throws Exception {
        Random r = new Random(seed);
        List<Endpoint> all = new ArrayList<>();
        for (int i = 0; i < 1_300; i++) {
            all.add(SyncSpecificationTest.ep("10.244." + (1 + i / 200) + "." + (2 + i % 200), i % 3 == 0 ? "node-a" : "node-b"));
        }
        FakeNfTables kernel = new FakeNfTables();
        Syncer syncer = new Syncer(kernel, new NftRenderer(SyncSpecificationTest.CFG), "nftproxy");
        long[] now = {0};
        syncer.clock(() -> now[0]);
        NodeInfo node = new NodeInfo("node-a", null, List.of(Inet.parse("192.168.50.2")), false);
        Map<ServicePortName, ServicePort> services = new TreeMap<>();
        Map<ServicePortName, List<Endpoint>> endpoints = new HashMap<>();
        ServicePortName port = WEB;
        boolean local = r.nextBoolean();
        int affinity = r.nextInt(3) == 0 ? 60 : 0;
        List<Endpoint> pool = new ArrayList<>(all);
        services.put(port, web(port, local, affinity));
        endpoints.put(port, List.copyOf(pool.subList(0, 3)));
        services.put(OTHER, ServicePort.builder(OTHER, 81).clusterIPs(List.of(Inet.parse("10.96.0.11"))).build());
        endpoints.put(OTHER, List.copyOf(all.subList(0, 1 + r.nextInt(20))));
        syncer.sync(new ProxyState(services, endpoints, node), null);
        // The table as the commit that brings the elements finds it: a sync whose structure goes
        // first (Syncer#structureFirst) commits it before, and a crossing packet walks its rules.
        View[] beforeLast = {null};
        syncer.commitThrough(tx -> {
            beforeLast[0] = View.of(kernel.readTable(Family.IP, "nftproxy"));
            return kernel.commit(tx);
        });
        Tally t = new Tally();
        for (int step = 0; step < 120 && t.problems.isEmpty(); step++) {
            View before = View.of(kernel.readTable(Family.IP, "nftproxy"));
            beforeLast[0] = null;
            Set<Bytes> allowed = keys(endpoints.getOrDefault(port, List.of()));
            int count = switch (r.nextInt(7)) {
                case 0 -> r.nextInt(9);
                case 1 -> 1 + r.nextInt(20);
                case 2 -> 120 + r.nextInt(20);
                case 3 -> 250 + r.nextInt(10);
                case 4 -> 1_000 + r.nextInt(300); // across 1,024 and blocks past it
                default -> r.nextInt(40);
            };
            Set<ServicePortName> changed = new HashSet<>(Set.of(port));
            Collections.shuffle(pool, r);
            if (r.nextInt(4) == 0) {
                // The Service's port renamed: its frontends go to another port in the same sync.
                services.remove(port);
                endpoints.remove(port);
                port = port.equals(WEB) ? RENAMED : WEB;
                changed.add(port);
            }
            local ^= r.nextInt(5) == 0;
            if (count == 0 && r.nextBoolean()) {
                services.remove(port);
                endpoints.remove(port);
            } else {
                services.put(port, web(port, local, affinity));
                endpoints.put(port, List.copyOf(pool.subList(0, count)));
            }
            if (r.nextInt(4) == 0) {
                endpoints.put(OTHER, List.copyOf(all.subList(0, 1 + r.nextInt(r.nextBoolean() ? 20 : 200))));
                changed.add(OTHER);
            }
            if (r.nextInt(3) == 0) {
                now[0] += r.nextInt(3) * Transitions.GRACE.toNanos() / 2;
            }
            Set<Bytes> current = keys(endpoints.getOrDefault(port, List.of()));
            allowed.addAll(current);
            syncer.sync(new ProxyState(services, endpoints, node), changed);
            View old = beforeLast[0] != null ? beforeLast[0] : before;
            View neu = View.of(kernel.readTable(Family.IP, "nftproxy"));
            String what = "seed " + seed + ", step " + step + ", " + count + " endpoints" + (local ? ", Local" : "")
                    + (affinity > 0 ? ", affinity" : "");
            // The ClusterIP from services' first rule: past 1,024 through the verdict map, below
            // through the tree's root (and the NodePort's block past 1,024 from its root).
            if (old.member("service-ips", CLUSTER_IP)) {
                for (int flip = 0; flip <= 14; flip++) {
                    walk(old, neu, "services", CLUSTER_IP, flip, allowed, what + ", services", t);
                }
            }
            if (neu.member("service-ips", CLUSTER_IP)) {
                walk(neu, neu, "services", CLUSTER_IP, 0, current, what + ", services, crossing nothing", t);
            }
            for (String map : List.of("nodeport-chains", "nodeport-external-local-blocks")) {
                String block = old.verdict(map, NODE_PORT);
                if (block != null && block.contains("-pick-")) {
                    for (int flip = 0; flip <= 12; flip++) {
                        walk(old, neu, block, NODE_PORT, flip, allowed, what + ", " + block, t);
                    }
                }
            }
            for (String root : ROOTS) {
                Bytes front = root.startsWith("ip") ? CLUSTER_IP : NODE_PORT;
                if (old.enters(root, front)) {
                    for (int flip = 0; flip <= 12; flip++) {
                        walk(old, neu, root, front, flip, allowed, what + ", " + root, t);
                    }
                }
                if (neu.enters(root, front)) {
                    // crossing nothing: the new rules, every set read now, the current endpoints only
                    walk(neu, neu, root, front, 0, current, what + ", " + root + ", crossing nothing", t);
                }
            }
        }
        assertEquals(List.of(), t.problems.stream().limit(10).toList(), t.problems.size() + " problems");
        assertTrue(t.crossed > 100, "walks that crossed the flip before their last level: " + t.crossed + " of " + t.leaves
                + " (" + t.answeredAfter + " of them missed a frontend left without a tree)");
    }
}
