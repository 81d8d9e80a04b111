package io.nftproxy.proxy.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * The fields of a KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) that nftproxy honours.
 * Unknown fields are ignored, as kube-proxy's lenient decoding does for fields it has dropped.
 * {@code serviceProxyName} is nftproxy's own (the file may still be kube-proxy's otherwise).
 */
record ConfigFile(String hostnameOverride, List<String> clusterCIDRs, List<String> nodePortAddresses,
                  Boolean masqueradeAll, Integer masqueradeBit, String minSyncPeriod, String syncPeriod,
                  String healthzBindAddress, String metricsBindAddress, String mode, String serviceProxyName,
                  String detectLocalMode, String bridgeInterface, String interfaceNamePrefix) {

    static ConfigFile read(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IOException("config file " + file + " not found");
        }
        Map<String, Object> m;
        try {
            @SuppressWarnings("unchecked")
            Map<String, Object> read = new ObjectMapper(new YAMLFactory()).readValue(Files.readString(file), Map.class);
            m = read == null ? Map.of() : read;
        } catch (IOException e) {
            throw new IOException("config file " + file + " does not parse: " + e.getMessage().lines().findFirst().orElse(""), e);
        }
        Object kind = m.get("kind");
        if (kind != null && !"KubeProxyConfiguration".equals(kind)) {
            throw new IOException("config file " + file + " is a " + kind + ", not a KubeProxyConfiguration");
        }
        String mode = str(m.get("mode"));
        Map<String, Object> modeSection = section(m, mode == null || mode.isEmpty() ? "nftables" : mode);
        Map<String, Object> nft = section(m, "nftables");
        Map<String, Object> ipt = section(m, "iptables");
        List<String> cidrs = new ArrayList<>();
        String cc = str(m.get("clusterCIDR"));
        if (cc != null && !cc.isBlank()) {
            for (String c : cc.split(",")) {
                cidrs.add(c.trim());
            }
        }
        List<String> npa = new ArrayList<>();
        if (m.get("nodePortAddresses") instanceof List<?> l) {
            l.forEach(x -> npa.add(String.valueOf(x)));
        }
        Object masqAll = first(modeSection.get("masqueradeAll"), m.get("masqueradeAll"), nft.get("masqueradeAll"),
                ipt.get("masqueradeAll"));
        Object bit = first(modeSection.get("masqueradeBit"), nft.get("masqueradeBit"), ipt.get("masqueradeBit"));
        Object minSync = first(modeSection.get("minSyncPeriod"), nft.get("minSyncPeriod"), ipt.get("minSyncPeriod"));
        Object sync = first(modeSection.get("syncPeriod"), nft.get("syncPeriod"), ipt.get("syncPeriod"));
        return new ConfigFile(str(m.get("hostnameOverride")), cidrs, npa,
                masqAll == null ? null : Boolean.valueOf(String.valueOf(masqAll)),
                bit == null ? null : Integer.valueOf(String.valueOf(bit)), str(minSync), str(sync),
                str(m.get("healthzBindAddress")), str(m.get("metricsBindAddress")), mode,
                str(m.get("serviceProxyName")), // ours: kube-proxy's configuration has no such field
                str(m.get("detectLocalMode")), str(section(m, "detectLocal").get("bridgeInterface")),
                str(section(m, "detectLocal").get("interfaceNamePrefix")));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> section(Map<String, Object> m, String name) {
        Object s = m.get(name);
        return s instanceof Map<?, ?> ? (Map<String, Object>) s : Map.of();
    }

    private static Object first(Object... xs) {
        for (Object x : xs) {
            if (x != null) {
                return x;
            }
        }
        return null;
    }

    private static String str(Object o) {
        return o == null ? null : String.valueOf(o);
    }
}
