package io.nftproxy.proxy.source;

import static io.nftproxy.proxy.source.TreeValues.text;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDR;

import io.nftproxy.proxy.source.KubeObject.NodeRecord;
import io.nftproxy.proxy.source.KubeObject.ServiceRecord;
import io.nftproxy.proxy.source.KubeObject.SliceRecord;

/**
 * Which reader a Kubernetes object goes to, from a manifest's tree of maps, lists and scalars
 * (YAML or JSON) or from an informer's typed object: {@link ServiceReader},
 * {@link SliceReader}, {@link NodeReader}, {@link ServiceCidrReader}. Each reader's rules are
 * written once, so the same object gives the same model wherever it came from. A Service that
 * cannot be programmed becomes a record with the reason; a bad endpoint or port of a slice is
 * skipped with the reason, the rest of the slice kept.
 */
public final class KubeModel {
    private static final Logger LOG = LoggerFactory.getLogger(KubeModel.class);

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
        ObjectKey.Kind k = ObjectKey.Kind.of(kind);
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
        ObjectKey key = ObjectKey.of(k, text(meta.get("namespace")), name);
        if (LOG.isDebugEnabled()) {
            // A manifest's misspelling: dropped, as the API server drops unknown fields, and named.
            for (String field : KnownFields.unknown(k, m)) {
                LOG.debug("{}: unknown field {} dropped, as the API server drops it", key, field);
            }
        }
        if (!key.clusterScoped() && !selection.selects(meta.get("labels") instanceof Map<?, ?> l ? l : null)) {
            out.add(unselected(key));
            return;
        }
        out.add(switch (k) {
            case SERVICE -> ServiceReader.read(key, ServiceReader.tree(key, m));
            case ENDPOINT_SLICE -> SliceReader.read(key, SliceReader.tree(key, m));
            case NODE -> new NodeRecord(key, NodeReader.read(name, NodeReader.tree(m)));
            case SERVICE_CIDR -> ServiceCidrReader.read(key, ServiceCidrReader.tree(m), errors);
        });
    }

    /**
     * An informer's object, as the API client typed it, read without a detour through a tree:
     * the same record as the same object from a manifest. Null for a kind the proxy does not read.
     */
    public static KubeObject object(HasMetadata obj, ProxySelection selection, Consumer<String> errors) {
        ObjectKey.Kind k = obj instanceof Service ? ObjectKey.Kind.SERVICE
                : obj instanceof EndpointSlice ? ObjectKey.Kind.ENDPOINT_SLICE
                : obj instanceof Node ? ObjectKey.Kind.NODE
                : obj instanceof ServiceCIDR ? ObjectKey.Kind.SERVICE_CIDR : null;
        if (k == null) {
            return null;
        }
        ObjectMeta meta = obj.getMetadata();
        String name = meta == null ? null : meta.getName();
        if (name == null || name.isEmpty()) {
            errors.accept("a " + k.apiKind() + " without metadata.name (skipped)");
            return null;
        }
        ObjectKey key = ObjectKey.of(k, meta.getNamespace(), name);
        if (!key.clusterScoped() && !selection.selects(meta.getLabels())) {
            return unselected(key);
        }
        return switch (k) {
            case SERVICE -> ServiceReader.read(key, ServiceReader.api((Service) obj));
            case ENDPOINT_SLICE -> SliceReader.read(key, SliceReader.api((EndpointSlice) obj));
            case NODE -> new NodeRecord(key, NodeReader.read(name, NodeReader.api((Node) obj)));
            case SERVICE_CIDR -> ServiceCidrReader.read(key, ServiceCidrReader.api((ServiceCIDR) obj), errors);
        };
    }

    /**
     * A Service or EndpointSlice our selection does not take: to the store it is as if the object
     * were gone, so a label that moves a live object out of our selection removes its rules.
     */
    private static KubeObject unselected(ObjectKey key) {
        return key.kind() == ObjectKey.Kind.SERVICE ? new ServiceRecord(key, List.of(), null)
                : new SliceRecord(key, null, Map.of(), List.of(), null);
    }

    /** A typed object's list, empty where the client left it null: the readers' typed views read lists through it. */
    static <T> List<T> orEmpty(List<T> l) {
        return l == null ? List.of() : l;
    }
}
