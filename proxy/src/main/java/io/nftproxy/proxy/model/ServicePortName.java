package io.nftproxy.proxy.model;

/** Identifies one port of one Service: namespace/name, the port's name (may be empty) and protocol. */
public record ServicePortName(String namespace, String name, String port, Protocol protocol)
        implements Comparable<ServicePortName> {

    /** The service this port belongs to, "namespace/name". */
    public String service() {
        return namespace + "/" + name;
    }

    /** As kube-proxy names a service port in logs and rule comments: "namespace/name:port" (":port" when named). */
    public String nameAndPort() {
        return namespace + "/" + name + (port.isEmpty() ? "" : ":" + port);
    }

    @Override
    public int compareTo(ServicePortName o) {
        int c = namespace.compareTo(o.namespace);
        if (c == 0) {
            c = name.compareTo(o.name);
        }
        if (c == 0) {
            c = port.compareTo(o.port);
        }
        return c != 0 ? c : protocol.compareTo(o.protocol);
    }

    @Override
    public String toString() {
        return namespace + "/" + name + (port.isEmpty() ? "" : ":" + port) + "/" + protocol.lower();
    }
}
