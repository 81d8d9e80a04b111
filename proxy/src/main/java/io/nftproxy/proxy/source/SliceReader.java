package io.nftproxy.proxy.source;

import static io.nftproxy.proxy.source.KubeModel.orEmpty;
import static io.nftproxy.proxy.source.TreeValues.bool;
import static io.nftproxy.proxy.source.TreeValues.integer;
import static io.nftproxy.proxy.source.TreeValues.intern;
import static io.nftproxy.proxy.source.TreeValues.list;
import static io.nftproxy.proxy.source.TreeValues.map;
import static io.nftproxy.proxy.source.TreeValues.mapOrEmpty;
import static io.nftproxy.proxy.source.TreeValues.strings;
import static io.nftproxy.proxy.source.TreeValues.text;

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
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditions;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointHints;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.source.KubeObject.SliceRecord;

/**
 * An EndpointSlice (discovery.k8s.io/v1) to its endpoints per service port, the Service it
 * belongs to (its service-name label) and the endpoints controller's trigger time. An endpoint
 * with a bad address and a port out of range are skipped with the reason, the rest of the slice
 * kept. Written once against a {@link View}: a manifest's tree or an informer's typed object.
 */
final class SliceReader {
    private static final Logger LOG = LoggerFactory.getLogger(SliceReader.class);
    static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";
    static final String TRIGGER_TIME_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time";

    private SliceReader() {
    }

    /** The fields of a slice the proxy reads. */
    interface View {
        /** The {@code kubernetes.io/service-name} label, null without it. */
        String serviceName();

        /** The {@code endpoints.kubernetes.io/last-change-trigger-time} annotation, null without it. */
        String triggerTime();

        String addressType() throws InvalidObjectException;

        /** An entry that is not a mapping is null. */
        List<EndpointView> endpoints() throws InvalidObjectException;

        /** An entry that is not a mapping is null. */
        List<PortView> ports() throws InvalidObjectException;
    }

    interface EndpointView {
        List<String> addresses() throws InvalidObjectException;

        /** {@code conditions.ready}; null when absent. */
        Boolean ready() throws InvalidObjectException;

        Boolean serving() throws InvalidObjectException;

        Boolean terminating() throws InvalidObjectException;

        /** The names in {@code hints.forZones}; null when none are given (absent or empty, alike to kube-proxy). */
        Set<String> zoneHints() throws InvalidObjectException;

        /** The names in {@code hints.forNodes}; null when none are given. */
        Set<String> nodeHints() throws InvalidObjectException;

        String nodeName() throws InvalidObjectException;

        String zone() throws InvalidObjectException;
    }

    interface PortView {
        Integer port() throws InvalidObjectException;

        String name() throws InvalidObjectException;

        String protocol() throws InvalidObjectException;
    }

    /** A port as the API client typed it. */
    record TypedPort(Integer port, String name, String protocol) implements PortView {
    }

    static SliceRecord read(ObjectKey key, View slice) {
        List<String> errors = new ArrayList<>();
        String svc = slice.serviceName();
        Instant trigger = triggerTime(slice.triggerTime());
        if (svc == null || svc.isEmpty()) {
            return new SliceRecord(key, null, Map.of(), errors, trigger);
        }
        ObjectKey service = new ObjectKey(ObjectKey.Kind.SERVICE, key.namespace(), svc);
        try {
            return new SliceRecord(key, service, endpoints(key, svc, slice, errors), errors, trigger);
        } catch (InvalidObjectException e) {
            errors.add(e.getMessage());
            return new SliceRecord(key, service, Map.of(), errors, trigger);
        }
    }

    private static Map<ServicePortName, List<Endpoint>> endpoints(ObjectKey key, String svc, View slice, List<String> errors)
            throws InvalidObjectException {
        String what = key.toString();
        Map<ServicePortName, List<Endpoint>> out = new LinkedHashMap<>();
        String type = slice.addressType();
        if (!"IPv4".equals(type) && !"IPv6".equals(type)) {
            LOG.debug("{}: addressType {}: not proxied, as kube-proxy does not proxy it (ignored)", what, type);
            return out;
        }
        List<Endpoint> eps = new ArrayList<>();
        for (EndpointView e : slice.endpoints()) {
            if (e == null) {
                errors.add(what + ": an endpoint that is not a mapping (skipped)");
                continue;
            }
            try {
                Endpoint ep = endpoint(what, type, e);
                if (ep != null) {
                    eps.add(ep);
                }
            } catch (InvalidObjectException ex) {
                errors.add(ex.getMessage());
            }
        }
        for (PortView p : slice.ports()) {
            if (p == null) {
                errors.add(what + ": a port that is not a mapping (skipped)");
                continue;
            }
            Integer port;
            Protocol proto;
            String portName;
            try {
                port = p.port();
                portName = p.name();
                proto = Protocol.parse(p.protocol());
            } catch (InvalidObjectException ex) {
                errors.add(ex.getMessage() + " (port skipped)");
                continue;
            } catch (IllegalArgumentException ex) {
                errors.add(what + ": " + ex.getMessage() + " (port skipped)");
                continue;
            }
            if (port == null) {
                continue;
            }
            if (port < 1 || port > 65_535) {
                errors.add(what + ": port " + port + " is out of range (skipped)");
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
    private static Endpoint endpoint(String what, String type, EndpointView e) throws InvalidObjectException {
        List<String> addresses = e.addresses();
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
        // As kube-proxy reads them: absent ready and serving mean true, absent terminating false.
        Boolean ready = e.ready();
        Boolean serving = e.serving();
        Boolean terminating = e.terminating();
        Set<String> zoneHints = e.zoneHints();
        Set<String> nodeHints = e.nodeHints();
        return Endpoint.builder(addr, 0).node(intern(e.nodeName())).zone(intern(e.zone())).ready(ready == null || ready)
                .serving(serving == null || serving).terminating(terminating != null && terminating)
                .zoneHints(zoneHints).nodeHints(nodeHints).build();
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

    /** A slice as a manifest's tree holds it. */
    static View tree(ObjectKey key, Map<?, ?> slice) {
        String what = key.toString();
        Map<?, ?> meta = mapOrEmpty(slice.get("metadata"));
        return new View() {
            @Override
            public String serviceName() {
                return text(mapOrEmpty(meta.get("labels")).get(SERVICE_NAME_LABEL));
            }

            @Override
            public String triggerTime() {
                return text(mapOrEmpty(meta.get("annotations")).get(TRIGGER_TIME_ANNOTATION));
            }

            @Override
            public String addressType() throws InvalidObjectException {
                return text(slice.get("addressType"), what, "addressType");
            }

            @Override
            public List<EndpointView> endpoints() throws InvalidObjectException {
                List<EndpointView> out = new ArrayList<>();
                for (Object e : list(slice.get("endpoints"), what, "endpoints")) {
                    out.add(e instanceof Map<?, ?> m ? treeEndpoint(what, m) : null);
                }
                return out;
            }

            @Override
            public List<PortView> ports() throws InvalidObjectException {
                List<PortView> out = new ArrayList<>();
                for (Object po : list(slice.get("ports"), what, "ports")) {
                    out.add(po instanceof Map<?, ?> p ? new PortView() {
                        @Override
                        public Integer port() throws InvalidObjectException {
                            return integer(p.get("port"), what, "port");
                        }

                        @Override
                        public String name() throws InvalidObjectException {
                            return text(p.get("name"), what, "port name");
                        }

                        @Override
                        public String protocol() throws InvalidObjectException {
                            return text(p.get("protocol"), what, "protocol");
                        }
                    } : null);
                }
                return out;
            }
        };
    }

    private static EndpointView treeEndpoint(String what, Map<?, ?> e) {
        return new EndpointView() {
            @Override
            public List<String> addresses() throws InvalidObjectException {
                return strings(e.get("addresses"), what, "endpoint addresses");
            }

            private Object condition(String name) throws InvalidObjectException {
                Map<?, ?> c = map(e.get("conditions"), what, "endpoint conditions");
                return c == null ? null : c.get(name);
            }

            @Override
            public Boolean ready() throws InvalidObjectException {
                return bool(condition("ready"), what, "conditions.ready");
            }

            @Override
            public Boolean serving() throws InvalidObjectException {
                return bool(condition("serving"), what, "conditions.serving");
            }

            @Override
            public Boolean terminating() throws InvalidObjectException {
                return bool(condition("terminating"), what, "conditions.terminating");
            }

            private Set<String> hints(String field) throws InvalidObjectException {
                Map<?, ?> h = map(e.get("hints"), what, "endpoint hints");
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
                return out.isEmpty() ? null : out; // as the typed view: none given
            }

            @Override
            public Set<String> zoneHints() throws InvalidObjectException {
                return hints("forZones");
            }

            @Override
            public Set<String> nodeHints() throws InvalidObjectException {
                return hints("forNodes");
            }

            @Override
            public String nodeName() throws InvalidObjectException {
                return text(e.get("nodeName"), what, "nodeName");
            }

            @Override
            public String zone() throws InvalidObjectException {
                return text(e.get("zone"), what, "zone");
            }
        };
    }

    /** A slice as the API client typed it. */
    static View api(EndpointSlice slice) {
        Map<String, String> labels = slice.getMetadata().getLabels();
        Map<String, String> annotations = slice.getMetadata().getAnnotations();
        return new View() {
            @Override
            public String serviceName() {
                return labels == null ? null : labels.get(SERVICE_NAME_LABEL);
            }

            @Override
            public String triggerTime() {
                return annotations == null ? null : annotations.get(TRIGGER_TIME_ANNOTATION);
            }

            @Override
            public String addressType() {
                return slice.getAddressType();
            }

            @Override
            public List<EndpointView> endpoints() {
                List<EndpointView> out = new ArrayList<>();
                for (io.fabric8.kubernetes.api.model.discovery.v1.Endpoint e : orEmpty(slice.getEndpoints())) {
                    out.add(e == null ? null : apiEndpoint(e));
                }
                return out;
            }

            @Override
            public List<PortView> ports() {
                List<PortView> out = new ArrayList<>();
                for (EndpointPort p : orEmpty(slice.getPorts())) {
                    out.add(p == null ? null : new TypedPort(p.getPort(), p.getName(), p.getProtocol()));
                }
                return out;
            }
        };
    }

    private static EndpointView apiEndpoint(io.fabric8.kubernetes.api.model.discovery.v1.Endpoint e) {
        EndpointConditions c = e.getConditions();
        EndpointHints h = e.getHints();
        return new EndpointView() {
            @Override
            public List<String> addresses() {
                return orEmpty(e.getAddresses());
            }

            @Override
            public Boolean ready() {
                return c == null ? null : c.getReady();
            }

            @Override
            public Boolean serving() {
                return c == null ? null : c.getServing();
            }

            @Override
            public Boolean terminating() {
                return c == null ? null : c.getTerminating();
            }

            @Override
            public Set<String> zoneHints() {
                return h == null ? null : names(h.getForZones(), z -> z.getName());
            }

            @Override
            public Set<String> nodeHints() {
                return h == null ? null : names(h.getForNodes(), n -> n.getName());
            }

            @Override
            public String nodeName() {
                return e.getNodeName();
            }

            @Override
            public String zone() {
                return e.getZone();
            }
        };
    }

    /**
     * The names of typed hints. The client cannot tell an absent list from an empty one (it
     * reads both as empty); to the proxy both mean "no hints" (as to kube-proxy), and null is
     * what the tree gives for the common case, an absent field.
     */
    private static <T> Set<String> names(List<T> hints, Function<T, String> name) {
        if (hints == null || hints.isEmpty()) {
            return null;
        }
        Set<String> out = new HashSet<>();
        for (T hint : hints) {
            String n = hint == null ? null : name.apply(hint);
            if (n != null) {
                out.add(n.intern());
            }
        }
        return out;
    }
}
