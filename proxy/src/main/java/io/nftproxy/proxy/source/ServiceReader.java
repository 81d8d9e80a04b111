package io.nftproxy.proxy.source;

import static io.nftproxy.proxy.source.KubeModel.orEmpty;
import static io.nftproxy.proxy.source.TreeValues.integer;
import static io.nftproxy.proxy.source.TreeValues.list;
import static io.nftproxy.proxy.source.TreeValues.map;
import static io.nftproxy.proxy.source.TreeValues.strings;
import static io.nftproxy.proxy.source.TreeValues.text;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceSpec;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.LbAlgorithm;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.source.KubeObject.ServiceRecord;

/**
 * A Service (core/v1) to the ports the proxy programs, or the reason it cannot be programmed. The
 * rules are written once, against a {@link View} of the object: a manifest's tree
 * ({@link #tree}, which names a field of the wrong shape) or an informer's typed object
 * ({@link #api}, already typed by the client), so the same Service gives the same record from
 * either source.
 */
final class ServiceReader {
    /** kube-proxy's default ClientIP affinity timeout (3 hours), when the Service gives none. */
    private static final int DEFAULT_AFFINITY_SECONDS = 10_800;

    private ServiceReader() {
    }

    /** The fields of a Service the proxy reads, in the order it reads them. */
    interface View {
        boolean hasSpec() throws InvalidObjectException;

        String type() throws InvalidObjectException;

        List<String> clusterIPs() throws InvalidObjectException;

        String clusterIP() throws InvalidObjectException;

        List<String> externalIPs() throws InvalidObjectException;

        /** {@code status.loadBalancer.ingress}. */
        List<Ingress> ingress() throws InvalidObjectException;

        List<String> loadBalancerSourceRanges() throws InvalidObjectException;

        String externalTrafficPolicy() throws InvalidObjectException;

        String internalTrafficPolicy() throws InvalidObjectException;

        String sessionAffinity() throws InvalidObjectException;

        /** {@code spec.sessionAffinityConfig.clientIP.timeoutSeconds}. */
        Integer affinityTimeoutSeconds() throws InvalidObjectException;

        Integer healthCheckNodePort() throws InvalidObjectException;

        /** {@code spec.ports}; an empty entry is null. */
        List<PortView> ports() throws InvalidObjectException;

        /** The value of annotation {@code name} ({@code metadata.annotations}), or null. */
        String annotation(String name) throws InvalidObjectException;
    }

    interface PortView {
        String name() throws InvalidObjectException;

        String protocol() throws InvalidObjectException;

        Integer port() throws InvalidObjectException;

        Integer nodePort() throws InvalidObjectException;
    }

    /** A port as the API client typed it. */
    record TypedPort(String name, String protocol, Integer port, Integer nodePort) implements PortView {
    }

    /** One {@code status.loadBalancer.ingress} entry. */
    record Ingress(String ip, String ipMode) {
    }

    /** A Service's record: its ports, or why it cannot be programmed; what it asks that is not done, warned of. */
    static ServiceRecord read(ObjectKey key, View svc) {
        try {
            List<String> warnings = new ArrayList<>();
            return new ServiceRecord(key, ports(key, svc, warnings), null, warnings);
        } catch (InvalidObjectException e) {
            return new ServiceRecord(key, List.of(), e.getMessage());
        }
    }

    /**
     * The ports to program for a Service; empty for headless and ExternalName services. What it
     * asks that is done otherwise (an unknown load-balancing algorithm) goes to {@code warnings}.
     */
    static List<ServicePort> ports(ObjectKey key, View svc, List<String> warnings) throws InvalidObjectException {
        String what = key.toString();
        if (!svc.hasSpec()) {
            throw new InvalidObjectException(what, "has no spec");
        }
        String type = svc.type();
        if ("ExternalName".equals(type)) {
            return List.of();
        }
        List<String> ipStrings = svc.clusterIPs();
        if (ipStrings.isEmpty()) {
            String one = svc.clusterIP();
            ipStrings = one == null || one.isEmpty() ? List.of() : List.of(one);
        }
        if (ipStrings.isEmpty() || ipStrings.contains("None")) {
            return List.of();
        }
        List<InetAddress> clusterIPs = new ArrayList<>();
        for (String s : ipStrings) {
            clusterIPs.add(ip(what, "cluster IP", s));
        }
        List<InetAddress> externalIPs = new ArrayList<>();
        for (String s : svc.externalIPs()) {
            externalIPs.add(ip(what, "external IP", s));
        }
        boolean lb = "LoadBalancer".equals(type);
        boolean nodePorts = lb || "NodePort".equals(type);
        List<InetAddress> lbIPs = new ArrayList<>();
        List<Cidr> ranges = new ArrayList<>();
        if (lb) {
            for (Ingress in : svc.ingress()) {
                // ipMode Proxy: the load balancer proxies itself; kube-proxy does not claim the IP.
                if (in.ip() != null && !in.ip().isEmpty() && !"Proxy".equals(in.ipMode())) {
                    lbIPs.add(ip(what, "load-balancer ingress IP", in.ip()));
                }
            }
            for (String r : svc.loadBalancerSourceRanges()) {
                try {
                    ranges.add(Cidr.parse(r));
                } catch (IllegalArgumentException e) {
                    throw new InvalidObjectException(what, "invalid loadBalancerSourceRanges entry '" + r + "'");
                }
            }
        }
        boolean eLocal = "Local".equals(svc.externalTrafficPolicy());
        boolean iLocal = "Local".equals(svc.internalTrafficPolicy());
        int affinity = 0;
        if ("ClientIP".equals(svc.sessionAffinity())) {
            affinity = DEFAULT_AFFINITY_SECONDS;
            Integer timeout = svc.affinityTimeoutSeconds();
            if (timeout != null) {
                affinity = timeout;
                if (affinity <= 0 || affinity > 86_400) {
                    throw new InvalidObjectException(what, "sessionAffinityConfig timeoutSeconds " + affinity
                            + " is not in [1, 86400]");
                }
            }
        }
        LbAlgorithm algorithm = algorithm(what, svc.annotation(LbAlgorithm.ANNOTATION), warnings);
        Integer hcPort = svc.healthCheckNodePort();
        int hc = hcPort == null ? 0 : hcPort;
        List<PortView> ports = svc.ports();
        if (ports.isEmpty()) {
            throw new InvalidObjectException(what, "has no ports");
        }
        List<ServicePort> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (PortView p : ports) {
            if (p == null) {
                throw new InvalidObjectException(what, "has an empty port entry");
            }
            String portName = p.name();
            portName = portName == null ? "" : portName;
            String where = "port '" + portName + "': ";
            Protocol proto;
            try {
                proto = Protocol.parse(p.protocol());
            } catch (IllegalArgumentException e) {
                throw new InvalidObjectException(what, where + e.getMessage());
            }
            Integer portNumber = p.port();
            int port = portNumber == null ? 0 : portNumber;
            if (port < 1 || port > 65_535) {
                throw new InvalidObjectException(what, where + "port " + port + " is out of range 1-65535");
            }
            Integer np = nodePorts ? p.nodePort() : null;
            int nodePort = np == null ? 0 : np;
            if (nodePort < 0 || nodePort > 65_535) {
                throw new InvalidObjectException(what, where + "nodePort " + nodePort + " is out of range");
            }
            if (!seen.add(proto + "/" + port)) {
                throw new InvalidObjectException(what, "port " + port + "/" + proto + " is listed twice");
            }
            out.add(new ServicePort(new ServicePortName(key.namespace(), key.name(), portName.intern(), proto), clusterIPs,
                    port, nodePort, externalIPs, lbIPs, ranges, eLocal && (nodePorts || !externalIPs.isEmpty()),
                    iLocal, affinity, hc, algorithm));
        }
        return out;
    }

    /**
     * The load-balancing algorithm the annotation names; a value that names none is a warning
     * (the Service is programmed, with kube-proxy's random pick), not an error: a typo in an
     * optional annotation must not take a Service off the node.
     */
    private static LbAlgorithm algorithm(String what, String value, List<String> warnings) {
        if (value == null) {
            return LbAlgorithm.RANDOM;
        }
        LbAlgorithm a = LbAlgorithm.of(value.trim());
        if (a == null) {
            warnings.add(what + ": annotation " + LbAlgorithm.ANNOTATION + " '" + value + "' is not one of "
                    + LbAlgorithm.choices() + "; its endpoints are picked at random");
            return LbAlgorithm.RANDOM;
        }
        return a;
    }

    private static InetAddress ip(String what, String field, String s) throws InvalidObjectException {
        try {
            return Inet.parse(s);
        } catch (IllegalArgumentException e) {
            throw new InvalidObjectException(what, "invalid " + field + " '" + s + "'");
        }
    }

    /** A Service as a manifest's tree holds it. */
    static View tree(ObjectKey key, Map<?, ?> svc) {
        String what = key.toString();
        return new View() {
            private Map<?, ?> spec() throws InvalidObjectException {
                return map(svc.get("spec"), what, "spec");
            }

            private Object field(String name) throws InvalidObjectException {
                return spec().get(name);
            }

            @Override
            public boolean hasSpec() throws InvalidObjectException {
                return spec() != null;
            }

            @Override
            public String type() throws InvalidObjectException {
                return text(field("type"), what, "spec.type");
            }

            @Override
            public List<String> clusterIPs() throws InvalidObjectException {
                return strings(field("clusterIPs"), what, "spec.clusterIPs");
            }

            @Override
            public String clusterIP() throws InvalidObjectException {
                return text(field("clusterIP"), what, "spec.clusterIP");
            }

            @Override
            public List<String> externalIPs() throws InvalidObjectException {
                return strings(field("externalIPs"), what, "spec.externalIPs");
            }

            @Override
            public List<Ingress> ingress() throws InvalidObjectException {
                Map<?, ?> status = map(svc.get("status"), what, "status");
                Map<?, ?> lbStatus = status == null ? null : map(status.get("loadBalancer"), what, "status.loadBalancer");
                List<Ingress> out = new ArrayList<>();
                for (Object o : lbStatus == null ? List.of() : list(lbStatus.get("ingress"), what, "status.loadBalancer.ingress")) {
                    Map<?, ?> in = map(o, what, "status.loadBalancer.ingress[]");
                    if (in != null) {
                        out.add(new Ingress(text(in.get("ip"), what, "status.loadBalancer.ingress[].ip"),
                                text(in.get("ipMode"), what, "ipMode")));
                    }
                }
                return out;
            }

            @Override
            public List<String> loadBalancerSourceRanges() throws InvalidObjectException {
                return strings(field("loadBalancerSourceRanges"), what, "spec.loadBalancerSourceRanges");
            }

            @Override
            public String externalTrafficPolicy() throws InvalidObjectException {
                return text(field("externalTrafficPolicy"), what, "spec.externalTrafficPolicy");
            }

            @Override
            public String internalTrafficPolicy() throws InvalidObjectException {
                return text(field("internalTrafficPolicy"), what, "spec.internalTrafficPolicy");
            }

            @Override
            public String sessionAffinity() throws InvalidObjectException {
                return text(field("sessionAffinity"), what, "spec.sessionAffinity");
            }

            @Override
            public Integer affinityTimeoutSeconds() throws InvalidObjectException {
                Map<?, ?> cfg = map(field("sessionAffinityConfig"), what, "spec.sessionAffinityConfig");
                Map<?, ?> clientIP = cfg == null ? null : map(cfg.get("clientIP"), what, "spec.sessionAffinityConfig.clientIP");
                return clientIP == null ? null : integer(clientIP.get("timeoutSeconds"), what, "sessionAffinityConfig timeoutSeconds");
            }

            @Override
            public Integer healthCheckNodePort() throws InvalidObjectException {
                return integer(field("healthCheckNodePort"), what, "healthCheckNodePort");
            }

            @Override
            public List<PortView> ports() throws InvalidObjectException {
                List<PortView> out = new ArrayList<>();
                for (Object po : list(field("ports"), what, "spec.ports")) {
                    Map<?, ?> p = map(po, what, "spec.ports[]");
                    out.add(p == null ? null : treePort(what, p));
                }
                return out;
            }

            @Override
            public String annotation(String name) throws InvalidObjectException {
                Map<?, ?> meta = map(svc.get("metadata"), what, "metadata");
                Map<?, ?> annotations = meta == null ? null : map(meta.get("annotations"), what, "metadata.annotations");
                return annotations == null ? null : text(annotations.get(name), what, "annotation " + name);
            }
        };
    }

    private static PortView treePort(String what, Map<?, ?> p) {
        return new PortView() {
            @Override
            public String name() throws InvalidObjectException {
                return text(p.get("name"), what, "port name");
            }

            private String where() throws InvalidObjectException {
                String n = name();
                return "port '" + (n == null ? "" : n) + "': ";
            }

            @Override
            public String protocol() throws InvalidObjectException {
                return text(p.get("protocol"), what, where() + "protocol");
            }

            @Override
            public Integer port() throws InvalidObjectException {
                return integer(p.get("port"), what, where() + "port");
            }

            @Override
            public Integer nodePort() throws InvalidObjectException {
                return integer(p.get("nodePort"), what, where() + "nodePort");
            }
        };
    }

    /** A Service as the API client typed it: nothing here can have the wrong shape. */
    static View api(Service svc) {
        ServiceSpec spec = svc.getSpec();
        return new View() {
            @Override
            public boolean hasSpec() {
                return spec != null;
            }

            @Override
            public String type() {
                return spec.getType();
            }

            @Override
            public List<String> clusterIPs() {
                return orEmpty(spec.getClusterIPs());
            }

            @Override
            public String clusterIP() {
                return spec.getClusterIP();
            }

            @Override
            public List<String> externalIPs() {
                return orEmpty(spec.getExternalIPs());
            }

            @Override
            public List<Ingress> ingress() {
                if (svc.getStatus() == null || svc.getStatus().getLoadBalancer() == null) {
                    return List.of();
                }
                List<Ingress> out = new ArrayList<>();
                for (LoadBalancerIngress in : orEmpty(svc.getStatus().getLoadBalancer().getIngress())) {
                    if (in != null) {
                        out.add(new Ingress(in.getIp(), in.getIpMode()));
                    }
                }
                return out;
            }

            @Override
            public List<String> loadBalancerSourceRanges() {
                return orEmpty(spec.getLoadBalancerSourceRanges());
            }

            @Override
            public String externalTrafficPolicy() {
                return spec.getExternalTrafficPolicy();
            }

            @Override
            public String internalTrafficPolicy() {
                return spec.getInternalTrafficPolicy();
            }

            @Override
            public String sessionAffinity() {
                return spec.getSessionAffinity();
            }

            @Override
            public Integer affinityTimeoutSeconds() {
                return spec.getSessionAffinityConfig() == null || spec.getSessionAffinityConfig().getClientIP() == null ? null
                        : spec.getSessionAffinityConfig().getClientIP().getTimeoutSeconds();
            }

            @Override
            public Integer healthCheckNodePort() {
                return spec.getHealthCheckNodePort();
            }

            @Override
            public List<PortView> ports() {
                List<PortView> out = new ArrayList<>();
                for (io.fabric8.kubernetes.api.model.ServicePort p : orEmpty(spec.getPorts())) {
                    out.add(p == null ? null : new TypedPort(p.getName(), p.getProtocol(), p.getPort(), p.getNodePort()));
                }
                return out;
            }

            @Override
            public String annotation(String name) {
                Map<String, String> annotations = svc.getMetadata() == null ? null : svc.getMetadata().getAnnotations();
                return annotations == null ? null : annotations.get(name);
            }
        };
    }
}
