package io.nftproxy.proxy.config;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;

import io.nftproxy.netlink.nft.NftSyntax;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.IpFamily;

/**
 * The proxy's settings (flags and KubeProxyConfiguration merged). {@code nodePortAddresses} empty
 * means "primary": the node's own primary IPs. {@code serviceCounters} counts connections per
 * service port in the kernel (--service-counters), {@code endpointCounters} per endpoint as well
 * (--endpoint-counters, which implies the first). {@code dropInvalid} drops forwarded
 * packets conntrack marks INVALID, as kube-proxy does unless nf_conntrack_tcp_be_liberal is set.
 * {@code bindHardFail}: see {@link #withBindHardFail}.
 */
public record ProxyConfig(
        String hostname,
        List<InetAddress> nodeIPs,
        List<Cidr> clusterCIDRs,
        List<Cidr> serviceCIDRs,
        List<Cidr> nodePortAddresses,
        boolean masqueradeAll,
        int masqueradeBit,
        Duration minSyncPeriod,
        Duration syncPeriod,
        String table,
        LocalDetection localDetection,
        boolean serviceCounters,
        boolean endpointCounters,
        boolean dropInvalid,
        boolean bindHardFail) {

    public static final String DEFAULT_TABLE = "nftproxy";

    public ProxyConfig {
        nodeIPs = List.copyOf(nodeIPs);
        clusterCIDRs = List.copyOf(clusterCIDRs);
        if (localDetection == null) {
            localDetection = LocalDetection.CLUSTER_CIDR;
        }
        serviceCIDRs = List.copyOf(serviceCIDRs);
        nodePortAddresses = List.copyOf(nodePortAddresses);
        if (masqueradeBit < 0 || masqueradeBit > 31) {
            throw new IllegalArgumentException("masquerade bit " + masqueradeBit + " is not in [0, 31]");
        }
        // kube-proxy's validation of the sync periods, and a table name the kernel takes.
        if (syncPeriod == null || syncPeriod.isNegative() || syncPeriod.isZero()) {
            throw new IllegalArgumentException("--sync-period (syncPeriod) must be greater than 0, not " + syncPeriod);
        }
        if (minSyncPeriod == null || minSyncPeriod.isNegative()) {
            throw new IllegalArgumentException("--min-sync-period (minSyncPeriod) must be greater than or equal to 0");
        }
        if (minSyncPeriod.compareTo(syncPeriod) > 0) {
            throw new IllegalArgumentException("--sync-period (" + syncPeriod.toMillis() + " ms) must be greater than or equal"
                    + " to --min-sync-period (" + minSyncPeriod.toMillis() + " ms)");
        }
        try {
            NftSyntax.checkName("--table", table);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage().length() > 120 ? e.getMessage().substring(0, 120) + "..." : e.getMessage());
        }
        if (endpointCounters && !serviceCounters) {
            throw new IllegalArgumentException("endpoint counters need the service counters");
        }
        if (hostname == null || hostname.isEmpty()) {
            throw new IllegalArgumentException("the node name is empty (set --hostname-override)");
        }
    }

    /**
     * How often a sync re-asserts everything even without a change, as kube-proxy's hourly full
     * sync (its proxyutil.FullSyncPeriod). Not every {@code syncPeriod}: between those, changes
     * are applied as they come and drift in our tables is seen through the kernel's events, while
     * a re-assertion at 30k services costs the kernel seconds (flushing and refilling every map).
     */
    public static final Duration FULL_SYNC_PERIOD = Duration.ofHours(1);

    /** Counting per service port in the kernel (--service-counters); off, endpoints are not counted either. */
    public ProxyConfig withServiceCounters(boolean on) {
        return new ProxyConfig(hostname, nodeIPs, clusterCIDRs, serviceCIDRs, nodePortAddresses, masqueradeAll, masqueradeBit,
                minSyncPeriod, syncPeriod, table, localDetection, on, on && endpointCounters, dropInvalid, bindHardFail);
    }

    /** Counting per endpoint as well (--endpoint-counters); on, service ports are counted too. */
    public ProxyConfig withEndpointCounters(boolean on) {
        return new ProxyConfig(hostname, nodeIPs, clusterCIDRs, serviceCIDRs, nodePortAddresses, masqueradeAll, masqueradeBit,
                minSyncPeriod, syncPeriod, table, localDetection, serviceCounters || on, on, dropInvalid, bindHardFail);
    }

    public ProxyConfig withDropInvalid(boolean on) {
        return new ProxyConfig(hostname, nodeIPs, clusterCIDRs, serviceCIDRs, nodePortAddresses, masqueradeAll, masqueradeBit,
                minSyncPeriod, syncPeriod, table, localDetection, serviceCounters, endpointCounters, on, bindHardFail);
    }

    /**
     * kube-proxy's bindAddressHardFail: when false (kube-proxy's default), a health or metrics
     * address that cannot be bound is an error in the log and retried every 5 s, and the proxy runs
     * on; when true (nftproxy run's own default), it stops the start.
     */
    public ProxyConfig withBindHardFail(boolean on) {
        return new ProxyConfig(hostname, nodeIPs, clusterCIDRs, serviceCIDRs, nodePortAddresses, masqueradeAll, masqueradeBit,
                minSyncPeriod, syncPeriod, table, localDetection, serviceCounters, endpointCounters, dropInvalid, on);
    }

    public Duration fullSyncPeriod() {
        return syncPeriod.compareTo(FULL_SYNC_PERIOD) > 0 ? syncPeriod : FULL_SYNC_PERIOD;
    }

    public int masqueradeMark() {
        return 1 << masqueradeBit;
    }

    public List<Cidr> clusterCIDRs(IpFamily f) {
        return clusterCIDRs.stream().filter(c -> c.family() == f).toList();
    }

    /**
     * The service network of one family: {@code --service-cidr} when given (an override, and what
     * manifests without ServiceCIDR objects need), else the cluster's ServiceCIDR objects.
     */
    public List<Cidr> serviceCIDRs(IpFamily f, List<Cidr> fromCluster) {
        return (serviceCIDRs.isEmpty() ? fromCluster : serviceCIDRs).stream().filter(c -> c.family() == f).toList();
    }

    public List<Cidr> serviceCIDRs(IpFamily f) {
        return serviceCIDRs.stream().filter(c -> c.family() == f).toList();
    }

    public List<Cidr> nodePortAddresses(IpFamily f) {
        return nodePortAddresses.stream().filter(c -> c.family() == f).toList();
    }

    public static ProxyConfig defaults(String hostname) {
        return builder(hostname).build();
    }

    /**
     * Settings for {@code hostname} with every other value named as it is set: the defaults are
     * kube-proxy's (masquerade bit 14, min-sync-period 1 s, sync period 30 s, ClusterCIDR local
     * detection), the table {@value #DEFAULT_TABLE}, and a bind failure stops the start.
     */
    public static Builder builder(String hostname) {
        return new Builder(hostname);
    }

    /** Names the settings (fifteen of them) where the positional constructor would not. */
    public static final class Builder {
        private final String hostname;
        private List<InetAddress> nodeIPs = List.of();
        private List<Cidr> clusterCIDRs = List.of();
        private List<Cidr> serviceCIDRs = List.of();
        private List<Cidr> nodePortAddresses = List.of();
        private boolean masqueradeAll;
        private int masqueradeBit = 14;
        private Duration minSyncPeriod = Duration.ofSeconds(1);
        private Duration syncPeriod = Duration.ofSeconds(30);
        private String table = DEFAULT_TABLE;
        private LocalDetection localDetection = LocalDetection.CLUSTER_CIDR;
        private boolean serviceCounters;
        private boolean endpointCounters;
        private boolean dropInvalid;
        private boolean bindHardFail = true;

        private Builder(String hostname) {
            this.hostname = hostname;
        }

        public Builder nodeIPs(List<InetAddress> v) {
            nodeIPs = v;
            return this;
        }

        public Builder clusterCIDRs(List<Cidr> v) {
            clusterCIDRs = v;
            return this;
        }

        public Builder serviceCIDRs(List<Cidr> v) {
            serviceCIDRs = v;
            return this;
        }

        public Builder nodePortAddresses(List<Cidr> v) {
            nodePortAddresses = v;
            return this;
        }

        public Builder masqueradeAll(boolean v) {
            masqueradeAll = v;
            return this;
        }

        public Builder masqueradeBit(int v) {
            masqueradeBit = v;
            return this;
        }

        public Builder minSyncPeriod(Duration v) {
            minSyncPeriod = v;
            return this;
        }

        public Builder syncPeriod(Duration v) {
            syncPeriod = v;
            return this;
        }

        public Builder table(String v) {
            table = v;
            return this;
        }

        public Builder localDetection(LocalDetection v) {
            localDetection = v;
            return this;
        }

        public Builder serviceCounters(boolean v) {
            serviceCounters = v;
            return this;
        }

        /** Implies {@link #serviceCounters}. */
        public Builder endpointCounters(boolean v) {
            endpointCounters = v;
            return this;
        }

        public Builder dropInvalid(boolean v) {
            dropInvalid = v;
            return this;
        }

        public Builder bindHardFail(boolean v) {
            bindHardFail = v;
            return this;
        }

        /** The settings; invalid values are refused as the constructor refuses them. */
        public ProxyConfig build() {
            return new ProxyConfig(hostname, nodeIPs, clusterCIDRs, serviceCIDRs, nodePortAddresses, masqueradeAll,
                    masqueradeBit, minSyncPeriod, syncPeriod, table, localDetection, serviceCounters || endpointCounters,
                    endpointCounters, dropInvalid, bindHardFail);
        }
    }
}
