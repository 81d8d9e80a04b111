package io.nftproxy.proxy.source;

import java.net.InetAddress;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.source.KubeObject.NodeRecord;
import io.nftproxy.proxy.source.KubeObject.ServiceCidrRecord;
import io.nftproxy.proxy.source.KubeObject.ServiceRecord;
import io.nftproxy.proxy.source.KubeObject.SliceRecord;

/**
 * Pure conversions from Kubernetes objects, as trees of maps, lists and scalars (from YAML, JSON
 * or an informer's object), to the proxy's compact model. One converter for every source, so the
 * same object gives the same model wherever it came from. A Service that cannot be programmed
 * becomes a record with the reason; a bad endpoint or port of a slice is skipped with the reason,
 * the rest of the slice kept.
 */
public final class KubeModel {
    private static final Logger LOG = LoggerFactory.getLogger(KubeModel.class);
    public static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";
    public static final String ZONE_LABEL = "topology.kubernetes.io/zone";
    public static final String TRIGGER_TIME_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time";
    private static final int DEFAULT_AFFINITY_SECONDS = 10_800;

    private KubeModel() {
    }

    /**
     * The objects in one parsed document: a Service, EndpointSlice or Node, or the items of a
     * List kind; other kinds give nothing. An object that cannot even be identified (no kind or
     * name) is reported to {@code errors} and skipped.
     */
    public static List<KubeObject> objects(Object doc, Consumer<String> errors) {
        return objects(doc, ProxySelection.DEFAULT, errors);
    }

    /**
     * The same, where a Service or EndpointSlice that {@code selection} does not select becomes
     * an empty record: to the store it is as if the object were gone, so a label that moves a
     * live object out of our selection removes its rules, and moving it back restores them.
     */
    public static List<KubeObject> objects(Object doc, ProxySelection selection, Consumer<String> errors) {
        List<KubeObject> out = new ArrayList<>();
        collect(doc, null, selection, out, errors);
        return out;
    }

    private static void collect(Object doc, String defaultKind, ProxySelection selection, List<KubeObject> out,
                                Consumer<String> errors) {
        if (!(doc instanceof Map<?, ?> m)) {
            errors.accept("a document that is not a mapping (skipped)");
            return;
        }
        String kind = text(m.get("kind"));
        if (kind == null) {
            kind = defaultKind;
        }
        if (kind == null) {
            errors.accept("an object without kind (skipped)");
            return;
        }
        if (kind.endsWith("List") && m.get("items") instanceof List<?> items) {
            String itemKind = kind.equals("List") ? null : kind.substring(0, kind.length() - 4);
            for (Object item : items) {
                collect(item, itemKind, selection, out, errors);
            }
            return;
        }
        ObjectKey.Kind k = switch (kind) {
            case "Service" -> ObjectKey.Kind.SERVICE;
            case "EndpointSlice" -> ObjectKey.Kind.ENDPOINT_SLICE;
            case "Node" -> ObjectKey.Kind.NODE;
            case "ServiceCIDR" -> ObjectKey.Kind.SERVICE_CIDR;
            default -> null;
        };
        if (k == null && kind.equals("Endpoints") && LOG.isDebugEnabled()) {
            Map<?, ?> meta = m.get("metadata") instanceof Map<?, ?> mm ? mm : Map.of();
            LOG.debug("Endpoints {}/{}: ignored: kube-proxy reads EndpointSlices, never v1 Endpoints",
                    ObjectKey.namespace(text(meta.get("namespace"))), text(meta.get("name")));
        }
        if (k == null) {
            return; // not ours: ConfigMaps, Deployments, ...
        }
        Map<?, ?> meta = m.get("metadata") instanceof Map<?, ?> mm ? mm : Map.of();
        String name = text(meta.get("name"));
        if (name == null || name.isEmpty()) {
            errors.accept("a " + kind + " without metadata.name (skipped)");
            return;
        }
        boolean clusterScoped = k == ObjectKey.Kind.NODE || k == ObjectKey.Kind.SERVICE_CIDR;
        ObjectKey key = new ObjectKey(k, clusterScoped ? "" : ObjectKey.namespace(text(meta.get("namespace"))).intern(), name);
        if (LOG.isDebugEnabled()) {
            // A manifest's misspelling: dropped, as the API server drops unknown fields, and named.
            for (String field : KnownFields.unknown(k, m)) {
                LOG.debug("{}: unknown field {} dropped, as the API server drops it", key, field);
            }
        }
        if (!clusterScoped && !selection.selects(meta.get("labels") instanceof Map<?, ?> l ? l : null)) {
            out.add(k == ObjectKey.Kind.SERVICE ? new ServiceRecord(key, List.of(), null)
                    : new SliceRecord(key, null, Map.of(), List.of(), null));
            return;
        }
        out.add(switch (k) {
            case SERVICE -> service(key, m);
            case ENDPOINT_SLICE -> slice(key, m);
            case NODE -> new NodeRecord(key, node(name, m));
            case SERVICE_CIDR -> serviceCidr(key, m, errors);
        });
    }

    // ---- ServiceCIDR ----

    /** A ServiceCIDR's ranges ({@code spec.cidrs}, as kube-proxy reads it); one that does not parse is named and skipped. */
    static ServiceCidrRecord serviceCidr(ObjectKey key, Map<?, ?> m, Consumer<String> errors) {
        Map<?, ?> spec = m.get("spec") instanceof Map<?, ?> s ? s : Map.of();
        List<Cidr> cidrs = new ArrayList<>();
        if (spec.get("cidrs") instanceof List<?> l) {
            for (Object c : l) {
                try {
                    cidrs.add(Cidr.parse(text(c)));
                } catch (IllegalArgumentException | NullPointerException e) {
                    errors.accept(key + ": spec.cidrs: '" + c + "' is not a CIDR (skipped)");
                }
            }
        }
        return new ServiceCidrRecord(key, cidrs);
    }

    // ---- Service ----

    /** A Service's record: its ports, or why it cannot be programmed. */
    public static ServiceRecord service(ObjectKey key, Map<?, ?> svc) {
        try {
            return new ServiceRecord(key, servicePorts(key, svc), null);
        } catch (InvalidObjectException e) {
            return new ServiceRecord(key, List.of(), e.getMessage());
        }
    }

    /** The ports to program for a Service; empty for headless and ExternalName services. */
    static List<ServicePort> servicePorts(ObjectKey key, Map<?, ?> svc) throws InvalidObjectException {
        String what = key.toString();
        Map<?, ?> spec = map(svc.get("spec"), what, "spec");
        if (spec == null) {
            throw new InvalidObjectException(what, "has no spec");
        }
        String type = text(spec.get("type"), what, "spec.type");
        if ("ExternalName".equals(type)) {
            return List.of();
        }
        List<String> ipStrings = strings(spec.get("clusterIPs"), what, "spec.clusterIPs");
        if (ipStrings.isEmpty()) {
            String one = text(spec.get("clusterIP"), what, "spec.clusterIP");
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
        for (String s : strings(spec.get("externalIPs"), what, "spec.externalIPs")) {
            externalIPs.add(ip(what, "external IP", s));
        }
        boolean lb = "LoadBalancer".equals(type);
        boolean nodePorts = lb || "NodePort".equals(type);
        List<InetAddress> lbIPs = new ArrayList<>();
        if (lb) {
            Map<?, ?> status = map(svc.get("status"), what, "status");
            Map<?, ?> lbStatus = status == null ? null : map(status.get("loadBalancer"), what, "status.loadBalancer");
            for (Object o : lbStatus == null ? List.of() : list(lbStatus.get("ingress"), what, "status.loadBalancer.ingress")) {
                Map<?, ?> in = map(o, what, "status.loadBalancer.ingress[]");
                String ip = in == null ? null : text(in.get("ip"), what, "status.loadBalancer.ingress[].ip");
                // ipMode Proxy: the load balancer proxies itself; kube-proxy does not claim the IP.
                if (ip != null && !ip.isEmpty() && !"Proxy".equals(text(in.get("ipMode"), what, "ipMode"))) {
                    lbIPs.add(ip(what, "load-balancer ingress IP", ip));
                }
            }
        }
        List<Cidr> ranges = new ArrayList<>();
        if (lb) {
            for (String r : strings(spec.get("loadBalancerSourceRanges"), what, "spec.loadBalancerSourceRanges")) {
                try {
                    ranges.add(Cidr.parse(r));
                } catch (IllegalArgumentException e) {
                    throw new InvalidObjectException(what, "invalid loadBalancerSourceRanges entry '" + r + "'");
                }
            }
        }
        boolean eLocal = "Local".equals(text(spec.get("externalTrafficPolicy"), what, "spec.externalTrafficPolicy"));
        boolean iLocal = "Local".equals(text(spec.get("internalTrafficPolicy"), what, "spec.internalTrafficPolicy"));
        int affinity = 0;
        if ("ClientIP".equals(text(spec.get("sessionAffinity"), what, "spec.sessionAffinity"))) {
            affinity = DEFAULT_AFFINITY_SECONDS;
            Map<?, ?> cfg = map(spec.get("sessionAffinityConfig"), what, "spec.sessionAffinityConfig");
            Map<?, ?> clientIP = cfg == null ? null : map(cfg.get("clientIP"), what, "spec.sessionAffinityConfig.clientIP");
            Integer timeout = clientIP == null ? null : integer(clientIP.get("timeoutSeconds"), what,
                    "sessionAffinityConfig timeoutSeconds");
            if (timeout != null) {
                affinity = timeout;
                if (affinity <= 0 || affinity > 86_400) {
                    throw new InvalidObjectException(what, "sessionAffinityConfig timeoutSeconds " + affinity
                            + " is not in [1, 86400]");
                }
            }
        }
        Integer hcPort = integer(spec.get("healthCheckNodePort"), what, "healthCheckNodePort");
        int hc = hcPort == null ? 0 : hcPort;
        List<?> ports = list(spec.get("ports"), what, "spec.ports");
        if (ports.isEmpty()) {
            throw new InvalidObjectException(what, "has no ports");
        }
        List<ServicePort> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Object po : ports) {
            Map<?, ?> p = map(po, what, "spec.ports[]");
            if (p == null) {
                throw new InvalidObjectException(what, "has an empty port entry");
            }
            String portName = text(p.get("name"), what, "port name");
            portName = portName == null ? "" : portName;
            String where = "port '" + portName + "': ";
            Protocol proto;
            try {
                proto = Protocol.parse(text(p.get("protocol"), what, where + "protocol"));
            } catch (IllegalArgumentException e) {
                throw new InvalidObjectException(what, where + e.getMessage());
            }
            Integer portNumber = integer(p.get("port"), what, where + "port");
            int port = portNumber == null ? 0 : portNumber;
            if (port < 1 || port > 65_535) {
                throw new InvalidObjectException(what, where + "port " + port + " is out of range 1-65535");
            }
            Integer np = nodePorts ? integer(p.get("nodePort"), what, where + "nodePort") : null;
            int nodePort = np == null ? 0 : np;
            if (nodePort < 0 || nodePort > 65_535) {
                throw new InvalidObjectException(what, where + "nodePort " + nodePort + " is out of range");
            }
            if (!seen.add(proto + "/" + port)) {
                throw new InvalidObjectException(what, "port " + port + "/" + proto + " is listed twice");
            }
            out.add(new ServicePort(new ServicePortName(key.namespace(), key.name(), portName.intern(), proto), clusterIPs,
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

    // ---- EndpointSlice ----

    /**
     * An EndpointSlice's endpoints per service port (namespace and service from the slice's
     * service-name label). Endpoints with a bad address and ports out of range are skipped, with
     * the reason in the record's errors.
     */
    public static SliceRecord slice(ObjectKey key, Map<?, ?> slice) {
        String what = key.toString();
        List<String> errors = new ArrayList<>();
        Map<?, ?> meta = slice.get("metadata") instanceof Map<?, ?> m ? m : Map.of();
        String svc = meta.get("labels") instanceof Map<?, ?> labels ? text(labels.get(SERVICE_NAME_LABEL)) : null;
        Instant trigger = meta.get("annotations") instanceof Map<?, ?> ann ? triggerTime(text(ann.get(TRIGGER_TIME_ANNOTATION))) : null;
        if (svc == null || svc.isEmpty()) {
            return new SliceRecord(key, null, Map.of(), errors, trigger);
        }
        ObjectKey service = new ObjectKey(ObjectKey.Kind.SERVICE, key.namespace(), svc);
        try {
            return new SliceRecord(key, service, sliceEndpoints(key, svc, slice, e -> errors.add(e.getMessage())), errors, trigger);
        } catch (InvalidObjectException e) {
            errors.add(e.getMessage());
            return new SliceRecord(key, service, Map.of(), errors, trigger);
        }
    }

    private static Map<ServicePortName, List<Endpoint>> sliceEndpoints(ObjectKey key, String svc, Map<?, ?> slice,
                                                                      Consumer<InvalidObjectException> errors)
            throws InvalidObjectException {
        String what = key.toString();
        Map<ServicePortName, List<Endpoint>> out = new LinkedHashMap<>();
        String type = text(slice.get("addressType"), what, "addressType");
        if (!"IPv4".equals(type) && !"IPv6".equals(type)) {
            LOG.debug("{}: addressType {}: not proxied, as kube-proxy does not proxy it (ignored)", what, type);
            return out;
        }
        List<Endpoint> eps = new ArrayList<>();
        for (Object eo : list(slice.get("endpoints"), what, "endpoints")) {
            if (!(eo instanceof Map<?, ?> e)) {
                errors.accept(new InvalidObjectException(what, "an endpoint that is not a mapping (skipped)"));
                continue;
            }
            try {
                Endpoint ep = endpoint(what, type, e);
                if (ep != null) {
                    eps.add(ep);
                }
            } catch (InvalidObjectException ex) {
                errors.accept(ex);
            }
        }
        for (Object po : list(slice.get("ports"), what, "ports")) {
            if (!(po instanceof Map<?, ?> p)) {
                errors.accept(new InvalidObjectException(what, "a port that is not a mapping (skipped)"));
                continue;
            }
            Integer port;
            Protocol proto;
            String portName;
            try {
                port = integer(p.get("port"), what, "port");
                portName = text(p.get("name"), what, "port name");
                proto = Protocol.parse(text(p.get("protocol"), what, "protocol"));
            } catch (InvalidObjectException ex) {
                errors.accept(new InvalidObjectException(what, ex.getMessage().substring(what.length() + 2) + " (port skipped)"));
                continue;
            } catch (IllegalArgumentException ex) {
                errors.accept(new InvalidObjectException(what, ex.getMessage() + " (port skipped)"));
                continue;
            }
            if (port == null) {
                continue;
            }
            if (port < 1 || port > 65_535) {
                errors.accept(new InvalidObjectException(what, "port " + port + " is out of range (skipped)"));
                continue;
            }
            ServicePortName id = new ServicePortName(key.namespace(), svc, portName == null ? "" : portName.intern(), proto);
            List<Endpoint> withPort = new ArrayList<>(eps.size());
            for (Endpoint e : eps) {
                withPort.add(e.withPort(port));
            }
            out.put(id, List.copyOf(withPort));
        }
        return out;
    }

    /** One endpoint (without its port), or null when it has no address. */
    private static Endpoint endpoint(String what, String type, Map<?, ?> e) throws InvalidObjectException {
        List<String> addresses = strings(e.get("addresses"), what, "endpoint addresses");
        if (addresses.isEmpty()) {
            return null;
        }
        String a = addresses.get(0);
        InetAddress addr;
        try {
            addr = Inet.parse(a);
        } catch (IllegalArgumentException ex) {
            throw new InvalidObjectException(what, "invalid endpoint address '" + a + "' (skipped)");
        }
        if ("IPv4".equals(type) != (addr.getAddress().length == 4)) {
            throw new InvalidObjectException(what, "endpoint address '" + a + "' is not " + type + " (skipped)");
        }
        Map<?, ?> c = map(e.get("conditions"), what, "endpoint conditions");
        // As kube-proxy reads them: absent ready and serving mean true, absent terminating false.
        Boolean ready = c == null ? null : bool(c.get("ready"), what, "conditions.ready");
        Boolean serving = c == null ? null : bool(c.get("serving"), what, "conditions.serving");
        Boolean terminating = c == null ? null : bool(c.get("terminating"), what, "conditions.terminating");
        Map<?, ?> h = map(e.get("hints"), what, "endpoint hints");
        Set<String> zoneHints = hints(h, "forZones", what);
        Set<String> nodeHints = hints(h, "forNodes", what);
        return new Endpoint(addr, 0, intern(text(e.get("nodeName"), what, "nodeName")),
                intern(text(e.get("zone"), what, "zone")), ready == null || ready, serving == null || serving,
                terminating != null && terminating, zoneHints, nodeHints);
    }

    /** The names in {@code hints.forZones} or {@code hints.forNodes} ({@code [{name: ...}]}); null without the field. */
    private static Set<String> hints(Map<?, ?> h, String field, String what) throws InvalidObjectException {
        if (h == null || h.get(field) == null) {
            return null;
        }
        Set<String> out = new HashSet<>();
        for (Object z : list(h.get(field), what, "hints." + field)) {
            Map<?, ?> zm = map(z, what, "hints." + field + "[]");
            String name = zm == null ? null : text(zm.get("name"), what, "hints." + field + "[].name");
            if (name != null) {
                out.add(name.intern());
            }
        }
        return out;
    }

    /** The endpoints controller's annotation: when the change a slice carries was triggered. */
    static Instant triggerTime(String t) {
        if (t == null) {
            return null;
        }
        try {
            return OffsetDateTime.parse(t).toInstant();
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    // ---- Node ----

    /** The cluster autoscaler's taint on a node it is about to remove. */
    static final String TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler";

    /** This node as the proxy sees it: zone, primary addresses, whether it is leaving, pod CIDRs. */
    public static NodeInfo node(String name, Map<?, ?> n) {
        Map<?, ?> meta = n.get("metadata") instanceof Map<?, ?> m ? m : Map.of();
        String zone = meta.get("labels") instanceof Map<?, ?> labels ? text(labels.get(ZONE_LABEL)) : null;
        List<InetAddress> addrs = new ArrayList<>();
        Map<?, ?> status = n.get("status") instanceof Map<?, ?> s ? s : Map.of();
        List<?> addresses = status.get("addresses") instanceof List<?> l ? l : List.of();
        // Primary IPs: the first InternalIP of each family, else the first ExternalIP.
        for (String type : List.of("InternalIP", "ExternalIP")) {
            for (Object o : addresses) {
                if (!(o instanceof Map<?, ?> a) || !type.equals(text(a.get("type")))) {
                    continue;
                }
                try {
                    InetAddress ip = Inet.parse(text(a.get("address")));
                    if (addrs.stream().noneMatch(x -> x.getAddress().length == ip.getAddress().length)) {
                        addrs.add(ip);
                    }
                } catch (IllegalArgumentException | NullPointerException ignored) {
                    // a missing or malformed address is simply not a primary IP
                }
            }
        }
        // spec.podCIDRs (dual-stack), else the older single spec.podCIDR; a malformed one is not a pod CIDR.
        Map<?, ?> spec = n.get("spec") instanceof Map<?, ?> s ? s : Map.of();
        List<?> cidrs = spec.get("podCIDRs") instanceof List<?> l && !l.isEmpty() ? l
                : spec.get("podCIDR") != null ? List.of(spec.get("podCIDR")) : List.of();
        List<Cidr> podCIDRs = new ArrayList<>();
        for (Object c : cidrs) {
            try {
                podCIDRs.add(Cidr.parse(text(c)));
            } catch (IllegalArgumentException | NullPointerException ignored) {
                // skipped: NodeCIDR detection then finds no CIDR of that family
            }
        }
        // Leaving: being deleted, or marked for deletion by the cluster autoscaler (kube-proxy's
        // NodeEligible: a load balancer should drain it either way).
        boolean leaving = meta.get("deletionTimestamp") != null || (spec.get("taints") instanceof List<?> taints
                && taints.stream().anyMatch(t -> t instanceof Map<?, ?> m && TO_BE_DELETED_TAINT.equals(m.get("key"))));
        return new NodeInfo(name, zone, addrs, leaving, podCIDRs);
    }

    // ---- reading tree values ----

    private static String intern(String s) {
        return s == null ? null : s.intern();
    }

    /** A scalar as text, null when absent or not a scalar. */
    private static String text(Object o) {
        return o instanceof String s ? s : o instanceof Number || o instanceof Boolean ? o.toString() : null;
    }

    private static String text(Object o, String what, String field) throws InvalidObjectException {
        if (o == null || o instanceof String) {
            return (String) o;
        }
        if (o instanceof Number || o instanceof Boolean) {
            return o.toString();
        }
        throw new InvalidObjectException(what, field + " is not a scalar");
    }

    private static Integer integer(Object o, String what, String field) throws InvalidObjectException {
        if (o == null) {
            return null;
        }
        if (o instanceof Integer i) {
            return i;
        }
        String s = text(o, what, field);
        try {
            return Integer.valueOf(s.trim());
        } catch (NumberFormatException e) {
            throw new InvalidObjectException(what, field + " '" + s + "' is not a number");
        }
    }

    private static Boolean bool(Object o, String what, String field) throws InvalidObjectException {
        if (o == null || o instanceof Boolean) {
            return (Boolean) o;
        }
        String s = text(o, what, field);
        if (YAML11_TRUE.contains(s)) {
            return true;
        }
        if (YAML11_FALSE.contains(s)) {
            return false;
        }
        throw new InvalidObjectException(what, field + " '" + s + "' is not true or false");
    }

    /**
     * The booleans kubectl sends for a manifest's plain scalars: it reads YAML as YAML 1.1 does
     * (sigs.k8s.io/yaml over go-yaml v2), so "ready: yes" is true and "ready: off" false.
     */
    static final Set<String> YAML11_TRUE = Set.of("true", "True", "TRUE", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON");
    static final Set<String> YAML11_FALSE = Set.of("false", "False", "FALSE", "n", "N", "no", "No", "NO", "off", "Off", "OFF");

    private static Map<?, ?> map(Object o, String what, String field) throws InvalidObjectException {
        if (o == null || o instanceof Map) {
            return (Map<?, ?>) o;
        }
        throw new InvalidObjectException(what, field + " is not a mapping");
    }

    private static List<?> list(Object o, String what, String field) throws InvalidObjectException {
        if (o == null) {
            return List.of();
        }
        if (o instanceof List<?> l) {
            return l;
        }
        throw new InvalidObjectException(what, field + " is not a list");
    }

    private static List<String> strings(Object o, String what, String field) throws InvalidObjectException {
        List<String> out = new ArrayList<>();
        for (Object item : list(o, what, field)) {
            String s = text(item, what, field + "[]");
            if (s != null) {
                out.add(s);
            }
        }
        return out;
    }
}
