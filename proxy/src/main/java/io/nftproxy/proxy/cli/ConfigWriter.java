package io.nftproxy.proxy.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;

import io.nftproxy.proxy.config.Durations;
import io.nftproxy.proxy.config.KubeProxyConfigReader;
import io.nftproxy.proxy.config.KubeProxyConfiguration;

/**
 * kube-proxy's {@code --write-config-to}: the effective configuration as a KubeProxyConfiguration
 * file, defaults filled in, which {@link KubeProxyConfigReader} reads back to the same values.
 * The sync settings go in the mode's section, as kube-proxy writes them.
 */
final class ConfigWriter {
    private ConfigWriter() {
    }

    static String yaml(KubeProxyConfiguration c, String hostname) throws JsonProcessingException {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory().disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES));
        ObjectNode d = yaml.createObjectNode();
        d.put("apiVersion", KubeProxyConfigReader.API_VERSION);
        d.put("kind", "KubeProxyConfiguration");
        d.put("bindAddress", c.bindAddress());
        d.put("bindAddressHardFail", c.bindAddressHardFail());
        ObjectNode cc = d.putObject("clientConnection");
        cc.put("acceptContentTypes", c.clientConnection().acceptContentTypes());
        cc.put("burst", c.clientConnection().burst());
        cc.put("contentType", c.clientConnection().contentType());
        cc.put("kubeconfig", c.clientConnection().kubeconfig());
        cc.put("qps", c.clientConnection().qps());
        d.put("clusterCIDR", String.join(",", c.clusterCIDRs()));
        d.put("configSyncPeriod", Durations.format(c.configSyncPeriod()));
        ObjectNode ct = d.putObject("conntrack");
        ct.put("maxPerCore", c.conntrack().maxPerCore());
        ct.put("min", c.conntrack().min());
        ct.put("tcpBeLiberal", c.conntrack().tcpBeLiberal());
        ct.put("tcpCloseWaitTimeout", Durations.format(c.conntrack().tcpCloseWaitTimeout()));
        ct.put("tcpEstablishedTimeout", Durations.format(c.conntrack().tcpEstablishedTimeout()));
        ct.put("udpStreamTimeout", Durations.format(c.conntrack().udpStreamTimeout()));
        ct.put("udpTimeout", Durations.format(c.conntrack().udpTimeout()));
        ObjectNode dl = d.putObject("detectLocal");
        dl.put("bridgeInterface", c.bridgeInterface());
        dl.put("interfaceNamePrefix", c.interfaceNamePrefix());
        d.put("detectLocalMode", c.detectLocalMode());
        ObjectNode gates = d.putObject("featureGates");
        c.featureGates().forEach(gates::put);
        d.put("healthzBindAddress", c.healthzBindAddress());
        d.put("hostnameOverride", hostname);
        ObjectNode log = d.putObject("logging");
        log.put("format", c.loggingFormat());
        log.put("verbosity", c.verbosity());
        d.put("metricsBindAddress", c.metricsBindAddress());
        d.put("mode", c.mode());
        ObjectNode sync = d.putObject(c.mode());
        sync.put("masqueradeAll", c.sync().masqueradeAll());
        sync.put("masqueradeBit", c.sync().masqueradeBit());
        sync.put("minSyncPeriod", Durations.format(c.sync().minSyncPeriod()));
        sync.put("syncPeriod", Durations.format(c.sync().syncPeriod()));
        d.putArray("nodePortAddresses").addAll(c.nodePortAddresses().stream().map(d::textNode).toList());
        d.put("oomScoreAdj", c.oomScoreAdj());
        if (!c.serviceProxyName().isEmpty()) {
            d.put("serviceProxyName", c.serviceProxyName());
        }
        return yaml.writeValueAsString(d);
    }
}
