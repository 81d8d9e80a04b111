package io.nftproxy.proxy.source;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * What the proxy keeps of a Kubernetes object: the compact model it was converted to on arrival,
 * never the API object itself. Equal records mean nothing changed for the proxy.
 */
public sealed interface KubeObject {
    ObjectKey key();

    /**
     * A Service's ports, or the reason it cannot be programmed ({@code error} non-null, no
     * ports); {@code warnings}: what of it is programmed otherwise than it asks (an annotation's
     * value that names nothing), each a line for the log.
     */
    record ServiceRecord(ObjectKey key, List<ServicePort> ports, String error, List<String> warnings) implements KubeObject {
        public ServiceRecord {
            ports = List.copyOf(ports);
            warnings = List.copyOf(warnings);
        }

        /** A Service read without a warning. */
        public ServiceRecord(ObjectKey key, List<ServicePort> ports, String error) {
            this(key, ports, error, List.of());
        }
    }

    /**
     * An EndpointSlice: the Service it belongs to (null without the service-name
     * label), its endpoints per service port, the endpoints or ports it skipped and why, and the
     * endpoints controller's trigger time (null when absent).
     */
    record SliceRecord(ObjectKey key, ObjectKey service, Map<ServicePortName, List<Endpoint>> endpoints,
                       List<String> errors, Instant triggerTime) implements KubeObject {
        public SliceRecord {
            endpoints = Map.copyOf(endpoints);
            errors = List.copyOf(errors);
        }
    }

    record NodeRecord(ObjectKey key, NodeInfo node) implements KubeObject {
    }

    /** A ServiceCIDR (networking.k8s.io/v1): the service network ranges it allocates from ({@code spec.cidrs}). */
    record ServiceCidrRecord(ObjectKey key, List<Cidr> cidrs) implements KubeObject {
        public ServiceCidrRecord {
            cidrs = List.copyOf(cidrs);
        }
    }
}
