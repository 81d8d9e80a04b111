package io.nftproxy.proxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.config.KubeProxyConfigReader;
import io.nftproxy.proxy.config.KubeProxyConfiguration;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The deployment manifests parse, ask only for what nftproxy needs, and pass flags the CLI accepts. */
class DeployManifestsTest {
    static final Path DEPLOY = Path.of("..", "deploy");

    static List<HasMetadata> objects() throws Exception {
        KubernetesSerialization k = new KubernetesSerialization();
        List<HasMetadata> out = new ArrayList<>();
        for (String doc : Files.readString(DEPLOY.resolve("nftproxy.yaml")).split("(?m)^---\\s*$")) {
            if (doc.lines().allMatch(l -> l.isBlank() || l.trim().startsWith("#"))) {
                continue;
            }
            KubernetesResource r = k.unmarshal(doc);
            out.add((HasMetadata) r);
        }
        return out;
    }

    @Test
    void everyDocumentParsesIntoItsKind() throws Exception {
        assertEquals(List.of("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "DaemonSet"),
                objects().stream().map(HasMetadata::getKind).toList());
    }

    @Test
    void theDaemonSetAsksOnlyForNetAdmin() throws Exception {
        DaemonSet ds = (DaemonSet) objects().stream().filter(o -> o instanceof DaemonSet).findFirst().orElseThrow();
        assertTrue(ds.getSpec().getTemplate().getSpec().getHostNetwork());
        Container c = ds.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertFalse(Boolean.TRUE.equals(c.getSecurityContext().getPrivileged()), "not privileged");
        assertEquals(List.of("NET_ADMIN"), c.getSecurityContext().getCapabilities().getAdd());
        assertEquals(List.of("ALL"), c.getSecurityContext().getCapabilities().getDrop());
        assertEquals("/livez", c.getLivenessProbe().getHttpGet().getPath());
        assertEquals("/healthz", c.getReadinessProbe().getHttpGet().getPath());
        assertEquals(10256, c.getReadinessProbe().getHttpGet().getPort().getIntVal());
        Map<String, String> ann = ds.getSpec().getTemplate().getMetadata().getAnnotations();
        assertEquals("true", ann.get("prometheus.io/scrape"));
        assertEquals("10249", ann.get("prometheus.io/port"));
    }

    @Test
    void theContainerArgsAreFlagsTheCliAccepts() throws Exception {
        DaemonSet ds = (DaemonSet) objects().stream().filter(o -> o instanceof DaemonSet).findFirst().orElseThrow();
        List<String> args = ds.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs();
        CommandLine cl = new CommandLine(new Main());
        CommandLine.ParseResult parsed = cl.parseArgs(args.toArray(new String[0]));
        assertNotNull(parsed.subcommand(), "a subcommand: " + args);
        RunCommand run = (RunCommand) parsed.subcommand().commandSpec().userObject();
        assertTrue(run.sources.inCluster);
        assertEquals(Path.of("/etc/nftproxy/config.yaml"), run.config);
        assertEquals("$(NODE_NAME)", run.hostname, "Kubernetes expands the node name");
    }

    @Test
    void theConfigMapHoldsAConfigurationWeRead(@TempDir Path tmp) throws Exception {
        ConfigMap cm = (ConfigMap) objects().stream().filter(o -> o instanceof ConfigMap).findFirst().orElseThrow();
        Path f = tmp.resolve("config.yaml");
        Files.writeString(f, cm.getData().get("config.yaml"));
        KubeProxyConfigReader.Read read = KubeProxyConfigReader.read(f);
        assertEquals(List.of(), read.warnings(), "every field of ours applies");
        KubeProxyConfiguration c = read.config();
        assertEquals(List.of("10.244.0.0/16"), c.clusterCIDRs());
        assertEquals(14, c.sync().masqueradeBit());
        assertEquals("0.0.0.0:10249", c.metricsBindAddress());
        assertEquals("0.0.0.0:10256", c.healthzBindAddress());
        assertEquals(List.of("primary"), c.nodePortAddresses());
    }

    @Test
    void theRoleGrantsWhatTheInformersUse() throws Exception {
        ClusterRole role = (ClusterRole) objects().stream().filter(o -> o instanceof ClusterRole).findFirst().orElseThrow();
        Map<String, List<String>> verbs = role.getRules().stream().flatMap(r -> r.getResources().stream()
                .map(res -> Map.entry(res, r))).collect(Collectors.toMap(Map.Entry::getKey,
                        e -> e.getValue().getVerbs(), (a, b) -> a));
        for (String res : List.of("services", "nodes", "endpointslices")) {
            assertTrue(verbs.get(res).containsAll(List.of("list", "watch")), res);
        }
        // Exactly what is used: the Starting event (KubernetesSource.announceStart) is created, never changed.
        assertEquals(List.of("create"), verbs.get("events"));
        assertEquals(List.of(List.of("events.k8s.io")), role.getRules().stream().filter(r -> r.getResources().contains("events"))
                .map(r -> r.getApiGroups()).toList());
        assertEquals(Set.of("services", "nodes", "endpointslices", "events"), verbs.keySet(), "and nothing else");
    }

    @Test
    void theImageNeedsNoNftBinary() throws Exception {
        String docker = Files.readString(DEPLOY.resolve("Dockerfile"));
        assertTrue(docker.contains("FROM eclipse-temurin:17-jre"));
        assertFalse(docker.toLowerCase().contains("apt-get install") && docker.contains("nftables"), "no nft installed");
        assertTrue(docker.contains("nftproxy.jar"));
    }
}
