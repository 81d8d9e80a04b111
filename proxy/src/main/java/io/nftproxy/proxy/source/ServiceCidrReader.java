package io.nftproxy.proxy.source;

import static io.nftproxy.proxy.source.KubeModel.orEmpty;
import static io.nftproxy.proxy.source.TreeValues.mapOrEmpty;
import static io.nftproxy.proxy.source.TreeValues.text;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDR;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.source.KubeObject.ServiceCidrRecord;

/**
 * A ServiceCIDR (networking.k8s.io/v1): the service network ranges it allocates from
 * ({@code spec.cidrs}, as kube-proxy reads it); one that does not parse is named and skipped.
 */
final class ServiceCidrReader {
    private ServiceCidrReader() {
    }

    static ServiceCidrRecord read(ObjectKey key, List<String> cidrs, Consumer<String> errors) {
        List<Cidr> out = new ArrayList<>();
        for (String c : cidrs) {
            try {
                out.add(Cidr.parse(c));
            } catch (IllegalArgumentException | NullPointerException e) {
                errors.accept(key + ": spec.cidrs: '" + c + "' is not a CIDR (skipped)");
            }
        }
        return new ServiceCidrRecord(key, out);
    }

    /** {@code spec.cidrs} of a manifest's tree; an entry that is no scalar is kept as written, to be named. */
    static List<String> tree(Map<?, ?> m) {
        List<String> out = new ArrayList<>();
        if (mapOrEmpty(m.get("spec")).get("cidrs") instanceof List<?> l) {
            for (Object c : l) {
                String s = text(c);
                out.add(s != null || c == null ? s : String.valueOf(c));
            }
        }
        return out;
    }

    static List<String> api(ServiceCIDR cidr) {
        return cidr.getSpec() == null ? List.of() : orEmpty(cidr.getSpec().getCidrs());
    }
}
