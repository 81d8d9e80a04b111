package io.nftproxy.proxy.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * What a sync does, as a table: from what the Syncer holds (the state it last synced, counted as
 * it was) and the state it is asked to sync, the kind of sync, the ports it renders, whether the
 * globals are rendered again, the shared sticky chains in use and the families' tables.
 */
class SyncPlanTest {
    static final ProxyConfig CONFIG = ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse("192.168.50.2"))).build();

    /**
     * A state: space-separated words, each a service port "NAME" or "NAME:OPTION,OPTION" (options
     * "v6": its ClusterIP IPv6, "sticky=SECONDS", "local": a NodePort of external policy Local),
     * or "@NODE" (the node's name, node-a by default) or "cidr=CIDR" (a ServiceCIDR); "-": no
     * state (nothing synced yet).
     */
    static ProxyState state(String words) {
        if (words == null) {
            return null;
        }
        Map<ServicePortName, ServicePort> services = new LinkedHashMap<>();
        String node = "node-a";
        List<Cidr> cidrs = new ArrayList<>();
        int n = 1;
        for (String w : words.isBlank() ? new String[0] : words.split(" ")) {
            if (w.startsWith("@")) {
                node = w.substring(1);
                continue;
            }
            if (w.startsWith("cidr=")) {
                cidrs.add(Cidr.parse(w.substring(5)));
                continue;
            }
            String name = w.contains(":") ? w.substring(0, w.indexOf(':')) : w;
            List<String> opts = w.contains(":") ? List.of(w.substring(w.indexOf(':') + 1).split(",")) : List.of();
            ServicePortName id = new ServicePortName("ns", name, "http", Protocol.TCP);
            ServicePort.Builder b = ServicePort.builder(id, 80)
                    .clusterIPs(List.of(Inet.parse(opts.contains("v6") ? "fd00::" + n : "10.96.0." + n)));
            for (String o : opts) {
                if (o.startsWith("sticky=")) {
                    b.affinitySeconds(Integer.parseInt(o.substring(7)));
                } else if (o.equals("local")) {
                    b.nodePort(30000 + n).externalPolicyLocal(true);
                }
            }
            services.put(id, b.build());
            n++;
        }
        return new ProxyState(services, Map.of(), NodeInfo.named(node), cidrs);
    }

    static Set<ServicePortName> names(String list) {
        Set<ServicePortName> out = new TreeSet<>();
        for (String name : list.isBlank() ? new String[0] : list.split(" ")) {
            out.add(new ServicePortName("ns", name, "http", Protocol.TCP));
        }
        return out;
    }

    /** What the Syncer holds after syncing {@code last} (nothing when null). */
    static SyncPlan.Held held(ProxyState last) {
        if (last == null) {
            return new SyncPlan.Held(null, Set.of(), Set::of, Map.of(), Map.of());
        }
        SyncPlan first = SyncPlan.of(held(null), last, null, CONFIG);
        return new SyncPlan.Held(last, first.families(), () -> last.services().keySet(), first.stickyTimeouts(),
                first.familyPorts());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', nullValues = "-", value = {
        // description; synced last; now; changed (-: all); kind; ports rendered; globals; sticky chains in use; families
        "the first sync: written whole; -; a b; a; REPLACE; a b; true; ''; V4",
        "a port changed: that port only; a b; a b; a; PARTIAL; a; false; ''; V4",
        "asked for everything: every port, and the one that went; a b; a; -; REASSERT; a b; true; ''; V4",
        "the node changed: every port, and the globals; a b; a b @node-b; a; PARTIAL; a b; true; ''; V4",
        "the service network changed: the globals, the port; a b; a b cidr=10.96.0.0/16; a; PARTIAL; a; true; ''; V4",
        "the first sticky port: its timeout's chains in the globals; a; a b:sticky=60; b; PARTIAL; b; true; 60x1; V4",
        "a second of that timeout: the globals as they are; a:sticky=60; a:sticky=60 b:sticky=60; b; PARTIAL; b; false; 60x2; V4",
        "another timeout: the globals again; a:sticky=60; a:sticky=60 b:sticky=90; b; PARTIAL; b; true; 60x1 90x1; V4",
        "sticky and Local: the local trees' chains too; a; a b:sticky=60,local; b; PARTIAL; b; true; 60x1 local-60x1; V4",
        "the last sticky port goes: its chains with it; a:sticky=60 b; b; a; PARTIAL; a; true; ''; V4",
        "a sticky port changed, its timeout kept; a:sticky=60; a:sticky=60,local; a; PARTIAL; a; true; 60x1 local-60x1; V4",
        "the first IPv6 port: every port, the ip6 table written whole; a; a b:v6; b; PARTIAL; a b; false; ''; V4 V6",
        "the last IPv6 port goes: the ip6 table with it; a b:v6; a; b; PARTIAL; b; false; ''; V4",
    })
    void whatASyncDoes(String description, String last, String now, String changed, SyncPlan.Kind kind, String ports,
                       boolean globals, String sticky, String families) {
        ProxyState before = state(last);
        SyncPlan plan = SyncPlan.of(held(before), state(now), changed == null ? null : names(changed), CONFIG);
        assertEquals(kind, plan.kind(), "kind");
        assertEquals(names(ports), plan.ports(), "ports rendered");
        assertEquals(globals, plan.globals(), "globals rendered again");
        List<String> inUse = new ArrayList<>();
        plan.stickyTimeouts().forEach((t, count) -> inUse.add((t.local() ? "local-" : "") + t.seconds() + "x" + count));
        assertEquals(sticky, String.join(" ", inUse), "sticky chains in use");
        assertEquals(families, String.join(" ", plan.families().stream().map(IpFamily::name).toList()), "families");
    }
}
