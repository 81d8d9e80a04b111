package io.nftproxy.proxy.source;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceSpec;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditions;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.ForZone;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * Pure conversions from Kubernetes API objects to the proxy model. A Service that cannot be
 * programmed fails whole, with the reason; a bad endpoint of a slice is skipped and reported, the
 * rest of the slice kept.
 */
public final class KubeModel {
    public static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";
    public static final String ZONE_LABEL = "topology.kubernetes.io/zone";
    private static final int DEFAULT_AFFINITY_SECONDS = 10_800;

    private KubeModel() {
    }

    public static String describe(String kind, io.fabric8.kubernetes.api.model.HasMetadata o) {
        String ns = o.getMetadata() == null ? null : o.getMetadata().getNamespace();
        String name = o.getMetadata() == null ? null : o.getMetadata().getName();
        return kind + " " + (ns == null || ns.isEmpty() ? "" : ns + "/") + name;
    }

    /** The ports to program for a Service; empty for headless and ExternalName services. */
    public static List<ServicePort> servicePorts(Service svc) throws InvalidObjectException {
        String what = describe("Service", svc);
        if (svc.getMetadata() == null || svc.getMetadata().getName() == null) {
            throw new InvalidObjectException(what, "has no name");
        }
        String ns = svc.getMetadata().getNamespace() == null ? "default" : svc.getMetadata().getNamespace();
        ServiceSpec spec = svc.getSpec();
        if (spec == null) {
            throw new InvalidObjectException(what, "has no spec");
        }
        if ("ExternalName".equals(spec.getType())) {
            return List.of();
        }
        List<String> ipStrings = spec.getClusterIPs() != null && !spec.getClusterIPs().isEmpty()
                ? spec.getClusterIPs() : spec.getClusterIP() == null ? List.of() : List.of(spec.getClusterIP());
        if (ipStrings.isEmpty() || ipStrings.contains("None")) {
            return List.of();
        }
        List<InetAddress> clusterIPs = new ArrayList<>();
        for (String s : ipStrings) {
            clusterIPs.add(ip(what, "cluster IP", s));
        }
        List<InetAddress> externalIPs = new ArrayList<>();
        for (String s : spec.getExternalIPs() == null ? List.<String>of() : spec.getExternalIPs()) {
            externalIPs.add(ip(what, "external IP", s));
        }
        boolean lb = "LoadBalancer".equals(spec.getType());
        boolean nodePorts = lb || "NodePort".equals(spec.getType());
        List<InetAddress> lbIPs = new ArrayList<>();
        if (lb && svc.getStatus() != null && svc.getStatus().getLoadBalancer() != null
                && svc.getStatus().getLoadBalancer().getIngress() != null) {
            for (LoadBalancerIngress in : svc.getStatus().getLoadBalancer().getIngress()) {
                // ipMode Proxy: the load balancer proxies itself; kube-proxy does not claim the IP.
                if (in.getIp() != null && !in.getIp().isEmpty() && !"Proxy".equals(in.getIpMode())) {
                    lbIPs.add(ip(what, "load-balancer ingress IP", in.getIp()));
                }
            }
        }
        List<Cidr> ranges = new ArrayList<>();
        if (lb && spec.getLoadBalancerSourceRanges() != null) {
            for (String r : spec.getLoadBalancerSourceRanges()) {
                try {
                    ranges.add(Cidr.parse(r));
                } catch (IllegalArgumentException e) {
                    throw new InvalidObjectException(what, "invalid loadBalancerSourceRanges entry '" + r + "'");
                }
            }
        }
        boolean eLocal = "Local".equals(spec.getExternalTrafficPolicy());
        boolean iLocal = "Local".equals(spec.getInternalTrafficPolicy());
        int affinity = 0;
        if ("ClientIP".equals(spec.getSessionAffinity())) {
            affinity = DEFAULT_AFFINITY_SECONDS;
            if (spec.getSessionAffinityConfig() != null && spec.getSessionAffinityConfig().getClientIP() != null
                    && spec.getSessionAffinityConfig().getClientIP().getTimeoutSeconds() != null) {
                affinity = spec.getSessionAffinityConfig().getClientIP().getTimeoutSeconds();
                if (affinity <= 0 || affinity > 86_400) {
                    throw new InvalidObjectException(what, "sessionAffinityConfig timeoutSeconds " + affinity
                            + " is not in [1, 86400]");
                }
            }
        }
        int hc = spec.getHealthCheckNodePort() == null ? 0 : spec.getHealthCheckNodePort();
        if (spec.getPorts() == null || spec.getPorts().isEmpty()) {
            throw new InvalidObjectException(what, "has no ports");
        }
        List<ServicePort> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (io.fabric8.kubernetes.api.model.ServicePort p : spec.getPorts()) {
            String portName = p.getName() == null ? "" : p.getName();
            Protocol proto;
            try {
                proto = Protocol.parse(p.getProtocol());
            } catch (IllegalArgumentException e) {
                throw new InvalidObjectException(what, "port '" + portName + "': " + e.getMessage());
            }
            int port = p.getPort() == null ? 0 : p.getPort();
            if (port < 1 || port > 65_535) {
                throw new InvalidObjectException(what, "port '" + portName + "': port " + port + " is out of range 1-65535");
            }
            int nodePort = !nodePorts || p.getNodePort() == null ? 0 : p.getNodePort();
            if (nodePort < 0 || nodePort > 65_535) {
                throw new InvalidObjectException(what, "port '" + portName + "': nodePort " + nodePort + " is out of range");
            }
            if (!seen.add(proto + "/" + port)) {
                throw new InvalidObjectException(what, "port " + port + "/" + proto + " is listed twice");
            }
            out.add(new ServicePort(new ServicePortName(ns, svc.getMetadata().getName(), portName, proto), clusterIPs,
                    port, nodePort, externalIPs, lbIPs, ranges, eLocal && (nodePorts || !externalIPs.isEmpty()),
                    iLocal, affinity, hc));
        }
        return out;
    }

    private static InetAddress ip(String what, String field, String s) throws InvalidObjectException {
        try {
            return Inet.parse(s);
        } catch (IllegalArgumentException e) {
            throw new InvalidObjectException(what, "invalid " + field + " '" + s + "'");
        }
    }

    /** The service a slice belongs to ("namespace/name"), or null when it has no service-name label. */
    public static String sliceService(EndpointSlice slice) {
        if (slice.getMetadata() == null || slice.getMetadata().getLabels() == null) {
            return null;
        }
        String svc = slice.getMetadata().getLabels().get(SERVICE_NAME_LABEL);
        if (svc == null || svc.isEmpty()) {
            return null;
        }
        String ns = slice.getMetadata().getNamespace() == null ? "default" : slice.getMetadata().getNamespace();
        return ns + "/" + svc;
    }

    /**
     * The endpoints a slice holds per service port (keyed by port name and protocol, namespace and
     * service from the slice). Endpoints with a bad address are skipped and reported to {@code errors}.
     */
    public static Map<ServicePortName, List<Endpoint>> sliceEndpoints(EndpointSlice slice, Consumer<InvalidObjectException> errors) {
        String what = describe("EndpointSlice", slice);
        String svc = sliceService(slice);
        Map<ServicePortName, List<Endpoint>> out = new LinkedHashMap<>();
        if (svc == null) {
            return out;
        }
        String type = slice.getAddressType();
        if (!"IPv4".equals(type) && !"IPv6".equals(type)) {
            return out; // FQDN slices are not proxied
        }
        String ns = svc.substring(0, svc.indexOf('/'));
        String name = svc.substring(svc.indexOf('/') + 1);
        List<Endpoint> eps = new ArrayList<>();
        if (slice.getEndpoints() != null) {
            for (io.fabric8.kubernetes.api.model.discovery.v1.Endpoint e : slice.getEndpoints()) {
                if (e.getAddresses() == null || e.getAddresses().isEmpty()) {
                    continue;
                }
                String a = e.getAddresses().get(0);
                InetAddress addr;
                try {
                    addr = Inet.parse(a);
                } catch (IllegalArgumentException ex) {
                    errors.accept(new InvalidObjectException(what, "invalid endpoint address '" + a + "' (skipped)"));
                    continue;
                }
                if (("IPv4".equals(type)) != (addr.getAddress().length == 4)) {
                    errors.accept(new InvalidObjectException(what, "endpoint address '" + a + "' is not " + type + " (skipped)"));
                    continue;
                }
                EndpointConditions c = e.getConditions();
                boolean ready = c == null || c.getReady() == null || c.getReady();
                boolean serving = c == null || c.getServing() == null ? ready : c.getServing();
                boolean terminating = c != null && c.getTerminating() != null && c.getTerminating();
                Set<String> hints = null;
                if (e.getHints() != null && e.getHints().getForZones() != null) {
                    hints = new HashSet<>();
                    for (ForZone z : e.getHints().getForZones()) {
                        hints.add(z.getName());
                    }
                }
                eps.add(new Endpoint(addr, 0, e.getNodeName(), e.getZone(), ready, serving, terminating, hints));
            }
        }
        if (slice.getPorts() == null) {
            return out;
        }
        for (EndpointPort p : slice.getPorts()) {
            if (p.getPort() == null) {
                continue;
            }
            if (p.getPort() < 1 || p.getPort() > 65_535) {
                errors.accept(new InvalidObjectException(what, "port " + p.getPort() + " is out of range (skipped)"));
                continue;
            }
            Protocol proto;
            try {
                proto = Protocol.parse(p.getProtocol());
            } catch (IllegalArgumentException ex) {
                errors.accept(new InvalidObjectException(what, ex.getMessage() + " (port skipped)"));
                continue;
            }
            ServicePortName id = new ServicePortName(ns, name, p.getName() == null ? "" : p.getName(), proto);
            List<Endpoint> withPort = new ArrayList<>();
            for (Endpoint e : eps) {
                withPort.add(new Endpoint(e.address(), p.getPort(), e.nodeName(), e.zone(), e.ready(), e.serving(),
                        e.terminating(), e.zoneHints()));
            }
            out.put(id, withPort);
        }
        return out;
    }

    /** The endpoints controller's annotation: when the change this slice carries was triggered. */
    public static java.time.Instant triggerTime(EndpointSlice slice) {
        if (slice.getMetadata() == null || slice.getMetadata().getAnnotations() == null) {
            return null;
        }
        String t = slice.getMetadata().getAnnotations().get("endpoints.kubernetes.io/last-change-trigger-time");
        if (t == null) {
            return null;
        }
        try {
            return java.time.OffsetDateTime.parse(t).toInstant();
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }

    public static NodeInfo node(Node n) {
        String zone = n.getMetadata() == null || n.getMetadata().getLabels() == null ? null
                : n.getMetadata().getLabels().get(ZONE_LABEL);
        List<InetAddress> addrs = new ArrayList<>();
        if (n.getStatus() != null && n.getStatus().getAddresses() != null) {
            // Primary IPs: the first InternalIP of each family, else the first ExternalIP.
            for (String type : List.of("InternalIP", "ExternalIP")) {
                for (NodeAddress a : n.getStatus().getAddresses()) {
                    if (!type.equals(a.getType())) {
                        continue;
                    }
                    try {
                        InetAddress ip = Inet.parse(a.getAddress());
                        if (addrs.stream().noneMatch(x -> x.getAddress().length == ip.getAddress().length)) {
                            addrs.add(ip);
                        }
                    } catch (IllegalArgumentException ignored) {
                        // a malformed address is simply not a primary IP
                    }
                }
            }
        }
        boolean deleting = n.getMetadata() != null && n.getMetadata().getDeletionTimestamp() != null;
        return new NodeInfo(n.getMetadata().getName(), zone, addrs, deleting);
    }
}
