package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.render.Transitions;
import io.nftproxy.proxy.source.KubeObject.NodeRecord;
import io.nftproxy.proxy.source.KubeObject.ServiceRecord;
import io.nftproxy.proxy.source.KubeObject.SliceRecord;
import io.nftproxy.proxy.sync.PartialSyncPropertyTestAccess;
import io.nftproxy.proxy.sync.Syncer;

/**
 * The store's change tracking as a property: whatever objects arrive, in whatever order (Services
 * put, changed, removed and put back; slices moved between services, split, emptied; two services
 * claiming one address; the Node relabelled), the state its snapshots hand out equals the state a
 * fresh store holding the final objects hands out, and partial syncs of only the ports the
 * snapshots reported as changed leave the table one full sync of that state makes. If the store
 * ever misses a change, some history shows it. Seed with -Dnftproxy.seed=N to replay a failure.
 */
class StoreChangePropertyTest {
    private static final int SERVICES = 8;
    private static final String[] CLUSTER_IPS = {"10.96.0.1", "10.96.0.2", "10.96.0.3", "10.96.0.4", "10.96.0.5"};

    private static ObjectKey serviceKey(int i) {
        return new ObjectKey(ObjectKey.Kind.SERVICE, "ns", "svc-" + i);
    }

    private static ServicePortName port(int svc, String name) {
        return new ServicePortName("ns", "svc-" + svc, name, Protocol.TCP);
    }

    private static ServiceRecord service(Random r, int i) {
        if (r.nextInt(10) == 0) {
            return new ServiceRecord(serviceKey(i), List.of(), "Service ns/svc-" + i + ": spec.ports[0].port: 70000 is out of range");
        }
        List<InetAddress> cip = List.of(Inet.parse(CLUSTER_IPS[r.nextInt(CLUSTER_IPS.length)]));
        List<ServicePort> ports = new ArrayList<>();
        ports.add(ServicePort.builder(port(i, "p"), 80).clusterIPs(cip)
                .nodePort(r.nextInt(4) == 0 ? 30000 + r.nextInt(3) : 0).affinitySeconds(r.nextInt(4) == 0 ? 600 : 0)
                .build());
        if (r.nextBoolean()) {
            ports.add(ServicePort.builder(port(i, "q"), 81).clusterIPs(cip).build());
        }
        return new ServiceRecord(serviceKey(i), ports, null);
    }

    private static final ObjectKey NODE = new ObjectKey(ObjectKey.Kind.NODE, "", "node-a");

    private static SliceRecord slice(Random r, int owner, int n) {
        ObjectKey key = new ObjectKey(ObjectKey.Kind.ENDPOINT_SLICE, "ns", "svc-" + owner + "-" + n);
        // Now and then a slice is relabelled to another service, or has no service label at all.
        int svc = r.nextInt(6) == 0 ? r.nextInt(SERVICES) : owner;
        if (r.nextInt(12) == 0) {
            return new SliceRecord(key, null, Map.of(), List.of(), null);
        }
        Map<ServicePortName, List<Endpoint>> eps = new HashMap<>();
        for (String name : List.of("p", "q")) {
            List<Endpoint> list = new ArrayList<>();
            for (int k = r.nextInt(4); k > 0; k--) {
                // Few addresses, so that two slices often list the same endpoint.
                InetAddress a = Inet.parse("10.244.0." + (1 + r.nextInt(6)));
                boolean terminating = r.nextInt(5) == 0;
                list.add(Endpoint.builder(a, 8080).node(r.nextBoolean() ? "node-a" : "node-b").ready(!terminating)
                        .terminating(terminating).zoneHints(PartialSyncPropertyTestAccess.zoneHints(r)).build());
            }
            if (!list.isEmpty() || r.nextBoolean()) {
                eps.put(port(svc, name), list);
            }
        }
        return new SliceRecord(key, serviceKey(svc), eps, List.of(), null);
    }

    /** The final objects, by key: what a fresh store is given. */
    private static void step(Random r, ObjectStore store, Map<ObjectKey, KubeObject> objects) {
        int i = r.nextInt(SERVICES);
        KubeObject o = switch (r.nextInt(6)) {
            case 0, 1 -> service(r, i);
            case 2, 3 -> slice(r, i, r.nextInt(2));
            case 4 -> null;
            // The Node comes (often after the slices: histories start without one), goes, and
            // changes its zone label, which may be absent or empty.
            default -> new NodeRecord(NODE, new NodeInfo("node-a", PartialSyncPropertyTestAccess.zone(r), List.of(), false));
        };
        if (o != null) {
            store.put(o);
            objects.put(o.key(), o);
        } else {
            int which = r.nextInt(5);
            ObjectKey gone = which == 0 ? NODE : which < 3 ? serviceKey(i)
                    : new ObjectKey(ObjectKey.Kind.ENDPOINT_SLICE, "ns", "svc-" + i + "-" + r.nextInt(2));
            store.remove(gone);
            objects.remove(gone);
        }
    }

    /** The state with each port's endpoints in address order: slices merge in no defined order. */
    private static List<String> normalized(ProxyState s) {
        List<String> out = new ArrayList<>();
        s.sortedServices().forEach(p -> out.add(p.toString()));
        Map<ServicePortName, List<String>> eps = new TreeMap<>();
        s.endpoints().forEach((id, list) -> eps.put(id, list.stream().map(Endpoint::toString).sorted().toList()));
        eps.forEach((id, list) -> out.add(id + " -> " + list));
        out.add(s.node().toString());
        return out;
    }

    /** The lines only one side has, for a failure message one can read. */
    private static String difference(List<String> expected, List<String> actual) {
        List<String> missing = new ArrayList<>(expected);
        missing.removeAll(actual);
        List<String> extra = new ArrayList<>(actual);
        extra.removeAll(expected);
        return "\nmissing: " + String.join("\n  ", missing) + "\nunexpected: " + String.join("\n  ", extra);
    }

    private static String table(FakeNfTables fake) throws Exception {
        return fake.hasTable(Family.IP, "nftproxy") ? PartialSyncPropertyTestAccess.normalized(fake.readTable(Family.IP, "nftproxy"))
                : "(no table)";
    }

    private static void history(long seed, int steps) throws Exception {
        Random r = new Random(seed);
        ObjectStore store = new ObjectStore("node-a");
        Map<ObjectKey, KubeObject> objects = new HashMap<>();
        FakeNfTables fake = new FakeNfTables();
        Syncer syncer = new Syncer(fake, new NftRenderer(PartialSyncPropertyTestAccess.CFG), "nftproxy");
        long[] now = {0};
        syncer.clock(() -> now[0]);
        syncer.sync(store.snapshot().state(), null);
        ObjectStore.Snapshot last = null;
        for (int s = 0; s < steps; s++) {
            step(r, store, objects);
            if (r.nextInt(3) == 0) {
                last = store.snapshot();
                syncer.sync(last.state(), last.nodeChanged() ? null : last.changed());
            }
        }
        last = store.snapshot();
        syncer.sync(last.state(), last.nodeChanged() ? null : last.changed());
        // What the changes kept for packets crossing their commits goes after its time, as the sync loop takes it away.
        now[0] += Transitions.GRACE.toNanos();
        syncer.sync(last.state(), Set.of());

        ObjectStore fresh = new ObjectStore("node-a");
        objects.values().forEach(fresh::put);
        ObjectStore.Snapshot freshSnapshot = fresh.snapshot();
        ProxyState expected = freshSnapshot.state();
        String replay = " (history " + seed + ", replay: -Dnftproxy.seed=" + seed + ")";
        List<String> want = normalized(expected);
        List<String> got = normalized(last.state());
        assertEquals(want, got, () -> "the store's state" + replay + difference(want, got));
        // The problems reported, shared frontends among them: as a fresh store finds them.
        assertEquals(new TreeMap<>(freshSnapshot.errors()), new TreeMap<>(last.errors()), "the problems reported" + replay);
        FakeNfTables full = new FakeNfTables();
        Syncer once = new Syncer(full, new NftRenderer(PartialSyncPropertyTestAccess.CFG), "nftproxy");
        PartialSyncPropertyTestAccess.takeIndices(once, syncer); // endpoints keep the indices history gave them
        once.sync(last.state(), null);
        assertEquals(table(full), table(fake), "partial syncs of the reported changes" + replay);
    }

    @Test
    void snapshotsMissNoChange() throws Exception {
        PartialSyncPropertyTestAccess.histories(seed -> history(seed, 40));
    }
}
