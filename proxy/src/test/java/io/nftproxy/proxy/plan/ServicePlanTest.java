package io.nftproxy.proxy.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.LocalDetection;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.NodeInfo;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;

/**
 * The plan both backends translate, as a table: a service port's shape and its endpoints → where
 * each kind of traffic goes, which endpoints each chain picks among, masquerading and the firewall.
 * Node "node-a" at 192.168.50.2.
 */
class ServicePlanTest {
    static final NodeInfo NODE = new NodeInfo("node-a", null, List.of(Inet.parse("192.168.50.2")), false);
    static final ProxyConfig CONFIG = ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse("192.168.50.2"))).build();

    /**
     * {@code shape}: space-separated words: "nodeport", "lb" (203.0.113.1), "extip" (198.51.100.1),
     * "v6" (a second ClusterIP fd00::1), "etp-local", "itp-local", "ranges=CIDR|CIDR", "affinity=SECONDS".
     * {@code endpoints}: "ip@node" with an optional "!" for not ready (and not serving).
     */
    static ServicePlan plan(String shape, String endpoints, IpFamily f) {
        return plan(shape, endpoints, f, CONFIG);
    }

    /** As {@link #plan(String, String, IpFamily)}, with {@code config}; "affinity=SECONDS" in the shape too. */
    static ServicePlan plan(String shape, String endpoints, IpFamily f, ProxyConfig config) {
        ServicePort.Builder b = PortShapes.port(new ServicePortName("ns", "svc", "http", Protocol.TCP), 1, shape);
        List<Endpoint> eps = new ArrayList<>();
        for (String e : endpoints.isBlank() ? new String[0] : endpoints.split(" ")) {
            boolean ready = !e.endsWith("!");
            String spec = ready ? e : e.substring(0, e.length() - 1);
            eps.add(Endpoint.builder(Inet.parse(spec.substring(0, spec.indexOf('@'))), 8080).node(spec.substring(spec.indexOf('@') + 1))
                    .ready(ready).serving(ready).build());
        }
        return ServicePlan.of(b.build(), eps, NODE, config, f);
    }

    static String ips(List<Endpoint> eps) {
        return String.join("|", eps.stream().map(e -> Inet.format(e.address())).toList());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', nullValues = "-", value = {
        // description; shape; endpoints; internal; external; masquerade external; cluster; local
        "ClusterIP with endpoints; -; 10.0.0.1@node-a 10.0.0.2@node-b; CLUSTER; NONE; false; 10.0.0.1|10.0.0.2; ''",
        "no endpoints: rejected; nodeport; ''; REJECT; REJECT; false; ''; ''",
        "endpoints neither ready nor serving are none: rejected; nodeport; 10.0.0.1@node-a!; REJECT; REJECT; false; ''; ''",
        "NodePort, policy Cluster: masqueraded; nodeport; 10.0.0.2@node-b; CLUSTER; CLUSTER; true; 10.0.0.2; ''",
        "eTP Local with a local endpoint; nodeport etp-local; 10.0.0.1@node-a 10.0.0.2@node-b; CLUSTER; EXTERNAL_LOCAL; false;"
                + " 10.0.0.1|10.0.0.2; 10.0.0.1",
        "eTP Local, endpoints elsewhere only: short-circuit kept, the rest dropped; lb etp-local; 10.0.0.2@node-b; CLUSTER;"
                + " EXTERNAL_LOCAL; false; 10.0.0.2; ''",
        "eTP Local without any endpoint: rejected as kube-proxy does; nodeport etp-local; ''; REJECT; REJECT; false; ''; ''",
        "iTP Local without a local endpoint: dropped; itp-local; 10.0.0.2@node-b; DROP; NONE; false; ''; ''",
        "iTP Local with one; itp-local; 10.0.0.1@node-a 10.0.0.2@node-b; LOCAL; NONE; false; ''; 10.0.0.1",
        "both Local with a NodePort: cluster endpoints for the short-circuit; nodeport etp-local itp-local; 10.0.0.2@node-b;"
                + " DROP; EXTERNAL_LOCAL; false; 10.0.0.2; ''",
        "iTP Local, eTP Cluster: internal local, external everywhere; extip itp-local; 10.0.0.1@node-a 10.0.0.2@node-b;"
                + " LOCAL; CLUSTER; true; 10.0.0.1|10.0.0.2; 10.0.0.1",
    })
    void routes(String description, String shape, String endpoints, Target internal, Target external, boolean masq, String cluster,
            String local) {
        ServicePlan p = plan(shape == null ? "" : shape, endpoints, IpFamily.V4);
        assertEquals(internal, p.internal(), "internal");
        assertEquals(external, p.external(), "external");
        assertEquals(masq, p.masqueradeExternal(), "masquerade external");
        assertEquals(cluster, ips(p.clusterEndpoints()), "cluster endpoints");
        assertEquals(local, ips(p.localEndpoints()), "local endpoints");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        // description; shape; sources let through to the load-balancer IPs
        "no ranges: no firewall; lb; ''",
        "ranges without a load-balancer IP: no firewall; nodeport ranges=10.0.0.0/8; ''",
        "the ranges; lb ranges=10.0.0.0/8|172.16.0.0/12; 10.0.0.0/8|172.16.0.0/12",
        "a range holding the node: its own VIP as a source too; lb ranges=192.168.50.0/24; 192.168.50.0/24|203.0.113.1/32",
        "ranges of the other family only: no firewall; lb ranges=fd00::/64; ''",
    })
    void firewall(String description, String shape, String allowed) {
        assertEquals(allowed, String.join("|", plan(shape, "10.0.0.1@node-a", IpFamily.V4).firewall().stream()
                .map(Cidr::toString).toList()));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        "IPv4: its ClusterIP, its endpoint; V4; 10.96.0.1; 10.0.0.1; 198.51.100.1; 203.0.113.1",
        "IPv6: its ClusterIP and endpoint, no external frontend of that family; V6; fd00::1; fd00::a; ''; ''",
    })
    void eachFamilyItsOwn(String description, IpFamily f, String clusterIPs, String cluster, String extIPs, String lbIPs) {
        ServicePlan p = plan("v6 extip lb", "10.0.0.1@node-a fd00::a@node-a", f);
        assertEquals(clusterIPs, String.join("|", p.clusterIPs().stream().map(Inet::format).toList()));
        assertEquals(cluster, ips(p.clusterEndpoints()));
        assertEquals(extIPs, String.join("|", p.externalIPs().stream().map(Inet::format).toList()));
        assertEquals(lbIPs, String.join("|", p.loadBalancerIPs().stream().map(Inet::format).toList()));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        // description; shape; port; NodePort; affinity seconds; sticky
        "a ClusterIP port: no NodePort, no affinity; ''; 80; 0; 0; false",
        "a NodePort; nodeport; 80; 30080; 0; false",
        "ClientIP affinity, kube-proxy's default timeout; nodeport affinity=10800; 80; 30080; 10800; true",
        "affinity without endpoints: still the port's (a client remembered once they come); affinity=60; 80; 0; 60; true",
    })
    void theServiceAsTheRenderersNeedIt(String description, String shape, int port, int nodePort, int affinity, boolean sticky) {
        ServicePlan p = plan(shape, description.contains("without endpoints") ? "" : "10.0.0.1@node-a", IpFamily.V4);
        assertEquals(new ServicePortName("ns", "svc", "http", Protocol.TCP), p.id());
        assertEquals(Protocol.TCP, p.protocol());
        assertEquals(port, p.port(), "port");
        assertEquals(nodePort, p.nodePort(), "NodePort");
        assertEquals(affinity, p.affinitySeconds(), "affinity");
        assertEquals(sticky, p.sticky(), "sticky");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        // description; family; masquerade-all; detection; cluster CIDRs; node's pod CIDRs; pods known; ClusterIP masquerade
        "the default: the cluster CIDR tells pods apart; V4; false; ClusterCIDR; 10.244.0.0/16; ''; true; NOT_FROM_PODS",
        "no cluster CIDR: nothing masqueraded; V4; false; ClusterCIDR; ''; ''; false; NONE",
        "a cluster CIDR of the other family only; V6; false; ClusterCIDR; 10.244.0.0/16; ''; false; NONE",
        "masquerade-all wins over the detector; V4; true; ClusterCIDR; 10.244.0.0/16; ''; true; ALL",
        "masquerade-all without a detector; V4; true; ClusterCIDR; ''; ''; false; ALL",
        "the node's pod CIDR; V4; false; NodeCIDR; ''; 10.244.1.0/24; true; NOT_FROM_PODS",
        "the node's pod CIDR, none given; V4; false; NodeCIDR; 10.244.0.0/16; ''; false; NONE",
        "an interface prefix, in every family; V6; false; InterfaceNamePrefix; ''; ''; true; NOT_FROM_PODS",
        "a bridge; V4; false; BridgeInterface; ''; ''; true; NOT_FROM_PODS",
    })
    void whichClusterIpConnectionsAreMasqueraded(String description, IpFamily f, boolean masqueradeAll, String detection,
            String clusterCidrs, String podCidrs, boolean known, ClusterIpMasquerade masquerade) {
        ProxyConfig config = ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse("192.168.50.2")))
                .masqueradeAll(masqueradeAll).clusterCIDRs(cidrs(clusterCidrs))
                .localDetection(LocalDetection.parse(detection, "cbr0", "veth")).build();
        NodeInfo node = new NodeInfo("node-a", null, List.of(Inet.parse("192.168.50.2")), false, cidrs(podCidrs));
        FamilyPolicy policy = FamilyPolicy.of(config, node, f);
        assertEquals(known, policy.podTrafficKnown(), "pods' traffic told apart");
        assertEquals(masquerade, policy.clusterIpMasquerade(), "ClusterIP masquerade");
        ServicePlan p = ServicePlan.of(ServicePort.builder(new ServicePortName("ns", "svc", "http", Protocol.TCP), 80)
                .clusterIPs(List.of(Inet.parse(f == IpFamily.V4 ? "10.96.0.1" : "fd00::1"))).build(), List.of(), node, config, f);
        assertEquals(masquerade, p.clusterIpMasquerade(), "the port's plan carries the family's");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', nullValues = "-", value = {
        // description; shape; endpoints; cluster CIDR known; pods to cluster; node to cluster; rest to local
        "endpoints here and elsewhere: every step; nodeport etp-local; 10.0.0.1@node-a 10.0.0.2@node-b; true; true; true; true",
        "none here: short-circuits, the rest dropped; lb etp-local; 10.0.0.2@node-b; true; true; true; false",
        "pods not told apart: only the node short-circuits; nodeport etp-local; 10.0.0.1@node-a; false; false; true; true",
        "iTP Local too, none here: the cluster endpoints still short-circuit; nodeport etp-local itp-local; 10.0.0.2@node-b;"
                + " true; true; true; false",
    })
    void externalTrafficOfPolicyLocal(String description, String shape, String endpoints, boolean known, boolean pods,
            boolean nodeItself, boolean rest) {
        ProxyConfig config = ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse("192.168.50.2")))
                .clusterCIDRs(known ? List.of(Cidr.parse("10.244.0.0/16")) : List.of()).build();
        ServicePlan p = plan(shape, endpoints, IpFamily.V4, config);
        assertEquals(Target.EXTERNAL_LOCAL, p.external());
        assertEquals(new ExternalLocalSteps(pods, nodeItself, rest), p.externalLocal());
        assertEquals(false, p.masqueradeExternal(), "policy Local keeps the client's address");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
        "policy Cluster; nodeport; 10.0.0.1@node-a",
        "no endpoints: rejected; nodeport etp-local; ''",
        "no external frontend; etp-local; 10.0.0.1@node-a",
    })
    void noExternalLocalStepsOtherwise(String description, String shape, String endpoints) {
        assertEquals(null, plan(shape, endpoints, IpFamily.V4).externalLocal());
    }

    static List<Cidr> cidrs(String list) {
        return list.isBlank() ? List.of() : List.of(list.split("\\|")).stream().map(Cidr::parse).toList();
    }
}
