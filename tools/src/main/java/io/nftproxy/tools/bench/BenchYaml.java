package io.nftproxy.tools.bench;

import java.util.List;

import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.ServicePort;

/**
 * The benchmark's services as manifests, in the block style kubectl and Helm write (the larger,
 * slower form to read), one Service and one EndpointSlice per service.
 */
public final class BenchYaml {
    private BenchYaml() {
    }

    /** Service and EndpointSlice documents of one service, each ending with a separator. */
    public static void append(StringBuilder sb, ServicePort svc, List<Endpoint> eps, String sliceSuffix) {
        String name = svc.id().name();
        String ns = svc.id().namespace();
        sb.append("apiVersion: v1\nkind: Service\nmetadata:\n  name: ").append(name).append("\n  namespace: ").append(ns)
                .append("\nspec:\n");
        if (svc.nodePort() != 0) {
            sb.append("  type: NodePort\n");
        }
        sb.append("  clusterIP: ").append(svc.clusterIPs().get(0).getHostAddress()).append("\n  ports:\n")
                .append("  - name: ").append(svc.id().port()).append("\n    port: ").append(svc.port())
                .append("\n    protocol: TCP\n    targetPort: 8080\n");
        if (svc.nodePort() != 0) {
            sb.append("    nodePort: ").append(svc.nodePort()).append('\n');
        }
        sb.append("---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: ").append(name)
                .append(sliceSuffix).append("\n  namespace: ").append(ns)
                .append("\n  labels:\n    kubernetes.io/service-name: ").append(name)
                .append("\naddressType: IPv4\nports:\n- name: ").append(svc.id().port())
                .append("\n  port: 8080\n  protocol: TCP\nendpoints:\n");
        for (Endpoint e : eps) {
            sb.append("- addresses:\n  - \"").append(e.address().getHostAddress()).append("\"\n  conditions:\n    ready: true\n")
                    .append("  nodeName: ").append(e.nodeName()).append('\n');
        }
        sb.append("---\n");
    }
}
