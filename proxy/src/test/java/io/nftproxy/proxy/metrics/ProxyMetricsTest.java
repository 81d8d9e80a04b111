package io.nftproxy.proxy.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import io.prometheus.client.exporter.common.TextFormat;

import io.nftproxy.netlink.nft.CommitStats;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncResult;

/** kube-proxy's metric names and meanings, fed with syncs as the loop reports them, read as a scrape reads them. */
class ProxyMetricsTest {
    static final String NO_LOCAL_V4_INTERNAL =
            "kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family=\"IPv4\",traffic_policy=\"internal\",}";
    private final ProxyMetrics m = new ProxyMetrics(new ObjectStore("node-a"));
    private final Map<ServicePortName, ServicePort> services = new HashMap<>();
    private final Map<ServicePortName, List<Endpoint>> endpoints = new HashMap<>();

    static ServicePort internalLocal(String name) {
        return ServicePort.builder(new ServicePortName("shop", name, "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse("10.96.0.9"))).internalPolicyLocal(true).build();
    }

    private ObjectStore.Snapshot snap(Set<ServicePortName> changed, long svcChanges, long epChanges, List<ObjectStore.Trigger> triggers) {
        return new ObjectStore.Snapshot(new ProxyState(services, endpoints, NodeInfo.named("node-a")), changed, false, Map.of(),
                svcChanges, epChanges, triggers);
    }

    private static SyncResult result(boolean full) {
        return new SyncResult(full, new CommitStats(12, 3, 4096, 100_000, 2_000_000), 1, 20, 30, 400, List.of(), 500_000);
    }

    private double value(String series) {
        Matcher x = Pattern.compile("(?m)^" + Pattern.quote(series) + " ([0-9.eE+-]+)$").matcher(MetricsEndpoints.scrape(m.registry(), TextFormat.CONTENT_TYPE_004));
        return x.find() ? Double.parseDouble(x.group(1)) : Double.NaN;
    }

    @Test
    void syncsChangesAndLocalEndpointsAsKubeProxyCountsThem() {
        ServicePort cart = internalLocal("cart");
        services.put(cart.id(), cart);
        endpoints.put(cart.id(), List.of(Endpoint.ready(Inet.parse("10.244.2.5"), 8080, "node-b")));
        Instant earlier = Instant.now().minusSeconds(2);
        m.synced(result(true), 5_000_000, snap(Set.of(cart.id()), 1, 1,
                List.of(new ObjectStore.Trigger(earlier, Set.of(IpFamily.V4)))));

        // Per IP family, as kube-proxy labels them: one sync here programs both families.
        assertEquals(1, value("kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family=\"IPv4\",}"));
        assertEquals(1, value("kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family=\"IPv6\",}"));
        assertEquals(1, value("kubeproxy_sync_full_proxy_rules_duration_seconds_count{ip_family=\"IPv4\",}"));
        assertEquals(1, value("kubeproxy_sync_proxy_rules_service_changes_total"));
        assertEquals(1, value("kubeproxy_sync_proxy_rules_endpoint_changes_total"));
        assertEquals(1, value("kubeproxy_network_programming_duration_seconds_count{ip_family=\"IPv4\",}"),
                "one trigger time, one observation, in the family of its slice");
        assertEquals(0, value("kubeproxy_network_programming_duration_seconds_count{ip_family=\"IPv6\",}"));
        assertEquals(1, value(NO_LOCAL_V4_INTERNAL), "internal traffic policy Local, its only endpoint on another node");
        assertEquals(0, value("kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family=\"IPv6\",traffic_policy=\"internal\",}"),
                "an IPv4-only service");
        assertEquals(0, value("kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family=\"IPv4\",traffic_policy=\"external\",}"));
        assertEquals(400, value("nftproxy_owned_objects{kind=\"set_elements\",}"));

        // A partial sync brings a local endpoint; an unrelated change keeps the count where it is.
        endpoints.put(cart.id(), List.of(Endpoint.ready(Inet.parse("10.244.1.5"), 8080, "node-a")));
        m.synced(result(false), 1_000_000, snap(Set.of(cart.id()), 0, 1, List.of()));
        assertEquals(0, value(NO_LOCAL_V4_INTERNAL));
        assertEquals(1, value("kubeproxy_sync_partial_proxy_rules_duration_seconds_count{ip_family=\"IPv4\",}"));
        assertEquals(2, value("kubeproxy_sync_proxy_rules_endpoint_changes_total"));
        ServicePort web = internalLocal("web");
        services.put(web.id(), web);
        m.synced(result(false), 1_000_000, snap(Set.of(web.id()), 1, 0, List.of()));
        assertEquals(1, value(NO_LOCAL_V4_INTERNAL), "web has no endpoint at all; cart is not looked at again");

        m.failed(false, new IllegalStateException("refused"));
        m.repaired();
        m.checkQueued();
        m.checkQueued();
        m.healthz(503);
        m.livez(200);
        assertEquals(1, value("kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family=\"IPv4\",}"));
        assertEquals(0, value("kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total{ip_family=\"IPv6\",}"));
        m.reconciled(IpFamily.V4, 2_000_000, 3);
        assertEquals(3, value("kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family=\"IPv4\",}"));
        assertEquals(1, value("kubeproxy_conntrack_reconciler_sync_duration_seconds_count{ip_family=\"IPv4\",}"));
        assertEquals(1, value("nftproxy_drift_repairs_total"));
        assertEquals(2, value("nftproxy_drift_checks_total"));
        assertEquals(1, value("kubeproxy_proxy_healthz_total{code=\"503\",}"));
        assertEquals(1, value("kubeproxy_proxy_livez_total{code=\"200\",}"));
    }

    /** The iptables backend's failure counters are kube-proxy's iptables mode's, and nftables mode's are not served. */
    @Test
    void iptablesModeHasItsOwnFailureCounters() {
        ProxyMetrics ipt = new ProxyMetrics(new ObjectStore("node-a"), "iptables");
        ipt.failed(true, new IllegalStateException("iptables-restore exited 1"));
        String scrape = MetricsEndpoints.scrape(ipt.registry(), TextFormat.CONTENT_TYPE_004);
        assertTrue(scrape.contains("kubeproxy_sync_proxy_rules_iptables_restore_failures_total{ip_family=\"IPv4\",} 1.0"), scrape);
        assertTrue(scrape.contains("kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total{ip_family=\"IPv6\",} 0.0"));
        assertFalse(scrape.contains("nftables"), scrape);
        ipt.iptablesRules((f, table) -> f == IpFamily.V4 && table.equals("nat") ? 120 : 7, (f, table) -> 3);
        scrape = MetricsEndpoints.scrape(ipt.registry(), TextFormat.CONTENT_TYPE_004);
        assertTrue(scrape.contains("kubeproxy_sync_proxy_rules_iptables_total{ip_family=\"IPv4\",table=\"nat\",} 120.0"), scrape);
        assertTrue(scrape.contains("kubeproxy_sync_proxy_rules_iptables_total{ip_family=\"IPv6\",table=\"filter\",} 7.0"), scrape);
        assertTrue(scrape.contains("kubeproxy_sync_proxy_rules_iptables_last{ip_family=\"IPv4\",table=\"filter\",} 3.0"), scrape);
    }
}
