package io.nftproxy.proxy.config;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A KubeProxyConfiguration ({@code kubeproxy.config.k8s.io/v1alpha1}) with kube-proxy's defaults
 * applied: every field nftproxy acts on, typed. {@link KubeProxyConfigReader} makes one from a
 * file (or none: all defaults); flags are laid over it by the command that reads them.
 *
 * @param mode            the backend: nftables or iptables ("" in the file means nftables here)
 * @param bindAddress     kube-proxy's idea of the node's primary IP ("0.0.0.0" or "::": the Node's)
 * @param clusterCIDRs    {@code clusterCIDR}, split at commas
 * @param sync            the sync and masquerade settings of the mode's section
 * @param configSyncPeriod how often informers resync
 * @param serviceProxyName nftproxy's own field: serve only Services labelled with this proxy name
 */
public record KubeProxyConfiguration(
        String mode,
        String hostnameOverride,
        String bindAddress,
        String healthzBindAddress,
        String metricsBindAddress,
        boolean bindAddressHardFail,
        ClientConnection clientConnection,
        List<String> clusterCIDRs,
        List<String> nodePortAddresses,
        String detectLocalMode,
        String bridgeInterface,
        String interfaceNamePrefix,
        Sync sync,
        Duration configSyncPeriod,
        int oomScoreAdj,
        Conntrack conntrack,
        Map<String, Boolean> featureGates,
        String loggingFormat,
        int verbosity,
        String serviceProxyName) {

    public KubeProxyConfiguration {
        clusterCIDRs = List.copyOf(clusterCIDRs);
        nodePortAddresses = List.copyOf(nodePortAddresses);
        featureGates = Map.copyOf(featureGates);
    }

    /** The same with the logging settings the command line made effective (its flags win over the file). */
    public KubeProxyConfiguration withLogging(String format, int v) {
        return new KubeProxyConfiguration(mode, hostnameOverride, bindAddress, healthzBindAddress, metricsBindAddress,
                bindAddressHardFail, clientConnection, clusterCIDRs, nodePortAddresses, detectLocalMode, bridgeInterface,
                interfaceNamePrefix, sync, configSyncPeriod, oomScoreAdj, conntrack, featureGates, format, v, serviceProxyName);
    }

    /** The same with other health and metrics addresses ("" turns a server off). */
    public KubeProxyConfiguration withBindAddresses(String healthz, String metrics) {
        return new KubeProxyConfiguration(mode, hostnameOverride, bindAddress, healthz, metrics,
                bindAddressHardFail, clientConnection, clusterCIDRs, nodePortAddresses, detectLocalMode, bridgeInterface,
                interfaceNamePrefix, sync, configSyncPeriod, oomScoreAdj, conntrack, featureGates, loggingFormat, verbosity,
                serviceProxyName);
    }

    /** {@code clientConnection}: how the API server is reached. */
    public record ClientConnection(String kubeconfig, String contentType, String acceptContentTypes, float qps, int burst) {
    }

    /** {@code nftables.*} (or {@code iptables.*} in iptables mode). */
    public record Sync(boolean masqueradeAll, int masqueradeBit, Duration syncPeriod, Duration minSyncPeriod) {
    }

    /**
     * {@code conntrack.*}, as kube-proxy applies them at start: {@code maxPerCore} 0 leaves
     * nf_conntrack_max alone (and ignores {@code min}); a zero timeout leaves its sysctl alone.
     */
    public record Conntrack(int maxPerCore, int min, Duration tcpEstablishedTimeout, Duration tcpCloseWaitTimeout,
                            boolean tcpBeLiberal, Duration udpTimeout, Duration udpStreamTimeout) {
    }

    /** Every field at kube-proxy's default (nftables mode). */
    public static KubeProxyConfiguration defaults() {
        return KubeProxyConfigReader.parse("", "(defaults)", Map.of()).config();
    }
}
