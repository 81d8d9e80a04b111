package io.nftproxy.proxy.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.iptables.IptablesRenderer;
import io.nftproxy.proxy.manifest.Yaml;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.proxy.source.KubeModel;
import io.nftproxy.proxy.source.ObjectStore;

/**
 * The iptables-restore input the reference backend renders for some conformance scenarios'
 * objects, as checked in under {@code golden/iptables/} and read by a person: a change to the
 * reference layout shows up here as a diff to review, without root. (`ConformanceKernelTest`
 * runs the same scenarios with real packets.) {@code NFTPROXY_UPDATE_GOLDEN=1} rewrites them.
 */
class IptablesGoldenTest {
    private static final Path GOLDEN = Path.of("src/test/resources/golden/iptables");

    /** The settings ConformanceKernelTest runs the scenarios with. */
    static ProxyConfig config() {
        return ProxyConfig.builder("node-a").nodeIPs(List.of(Inet.parse(Sandbox.NODE_IP), Inet.parse(Sandbox.NODE_IP6)))
                .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"), Cidr.parse("fd00:244::/64")))
                .serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16"), Cidr.parse("fd00:96::/64"))).build()
                .withDropInvalid(true); // kube-proxy's, with be_liberal unset
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"01-clusterip-tcp", "07-no-endpoints-reject", "11-nodeport-local-policy",
            "16-loadbalancer-source-ranges", "19-session-affinity", "23-dual-stack", "26-loadbalancer-local-policy",
            "35-session-affinity-nodeport"})
    void rendersAsCheckedIn(String name) throws Exception {
        Scenario sc = Scenario.read(ConformanceKernelTest.SCENARIOS.resolve(name + ".yaml"));
        assertTrue(sc.args().isEmpty(), "scenarios with flags of their own need those flags here too");
        ObjectStore store = new ObjectStore("node-a");
        List<String> problems = new ArrayList<>();
        Yaml.documents(sc.manifests()).forEach(d -> KubeModel.objects(d, problems::add).forEach(store::put));
        assertEquals(List.of(), problems);
        ProxyState state = store.snapshot().state();
        IptablesRenderer renderer = new IptablesRenderer(config());
        for (IpFamily f : IpFamily.values()) {
            String rendered = renderer.render(state, f).restore();
            Path file = GOLDEN.resolve(name + "." + f.name().toLowerCase(Locale.ROOT) + ".restore");
            if ("1".equals(System.getenv("NFTPROXY_UPDATE_GOLDEN"))) {
                Files.createDirectories(file.getParent());
                Files.writeString(file, rendered);
            }
            assertTrue(Files.exists(file), file + " is missing; NFTPROXY_UPDATE_GOLDEN=1 writes it");
            assertEquals(Files.readString(file), rendered, name + " " + f + " no longer renders as " + file
                    + " says; review the difference, then NFTPROXY_UPDATE_GOLDEN=1 rewrites it");
        }
    }
}
