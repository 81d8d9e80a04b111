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

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.config.KubeProxyConfigReader;
import io.nftproxy.proxy.config.KubeProxyConfiguration;
import org.junit.jupiter.api.io.TempDir;
import io.nftproxy.testkit.TestNetns;
import picocli.CommandLine;

/**
 * deploy/ as an operator applies it: {@code kubectl kustomize deploy/} renders (offline, with
 * Debian's kubectl), every object parses into its kind, the DaemonSet is kubeadm's kube-proxy
 * DaemonSet in shape (command line, mounts, privileges split between an --init-only init
 * container and a NET_ADMIN-only proxy), the ConfigMap holds a configuration and a kubeconfig
 * that we read as kube-proxy would, and the RBAC is kube-proxy's own.
 */
class DeployManifestsTest {
    static final Path DEPLOY = Path.of("..", "deploy");

    /** kubectl kustomize deploy/, parsed. */
    static List<HasMetadata> objects() throws Exception {
        String rendered = TestNetns.run(List.of("kubectl", "kustomize", DEPLOY.toString()), null);
        KubernetesSerialization k = new KubernetesSerialization();
        List<HasMetadata> out = new ArrayList<>();
        for (String doc : rendered.split("(?m)^---\\s*$")) {
            if (doc.lines().allMatch(l -> l.isBlank() || l.trim().startsWith("#"))) {
                continue;
            }
            KubernetesResource r = k.unmarshal(doc);
            out.add((HasMetadata) r);
        }
        return out;
    }

    static <T> T one(Class<T> kind) throws Exception {
        return objects().stream().filter(kind::isInstance).map(kind::cast).findFirst().orElseThrow();
    }

    @Test
    void kustomizeRendersEveryObjectIntoKubeSystem() throws Exception {
        List<HasMetadata> all = objects();
        assertEquals(List.of("ServiceAccount", "ClusterRoleBinding", "ConfigMap", "DaemonSet"),
                all.stream().map(HasMetadata::getKind).toList());
        assertTrue(all.stream().filter(o -> !(o instanceof ClusterRoleBinding))
                .allMatch(o -> "kube-system".equals(o.getMetadata().getNamespace())));
    }

    @Test
    void theDaemonSetIsKubeadmsKubeProxyDaemonSetInShape() throws Exception {
        DaemonSet ds = one(DaemonSet.class);
        PodSpec pod = ds.getSpec().getTemplate().getSpec();
        assertTrue(pod.getHostNetwork());
        assertEquals("system-node-critical", pod.getPriorityClassName());
        assertEquals(Map.of("kubernetes.io/os", "linux"), pod.getNodeSelector());
        assertEquals("Exists", pod.getTolerations().get(0).getOperator());
        Container c = pod.getContainers().get(0);
        assertEquals(List.of("/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf",
                "--hostname-override=$(NODE_NAME)"), c.getCommand(), "kubeadm's command line");
        assertEquals("localhost/nftproxy:0.1.0", c.getImage(), "the image kustomization.yaml names");
        assertFalse(Boolean.TRUE.equals(c.getSecurityContext().getPrivileged()), "not privileged");
        assertEquals(List.of("NET_ADMIN"), c.getSecurityContext().getCapabilities().getAdd());
        assertEquals(List.of("ALL"), c.getSecurityContext().getCapabilities().getDrop());
        assertEquals("/livez", c.getLivenessProbe().getHttpGet().getPath());
        assertEquals("/healthz", c.getReadinessProbe().getHttpGet().getPath());
        assertEquals(10256, c.getReadinessProbe().getHttpGet().getPort().getIntVal());
        assertTrue(c.getVolumeMounts().stream().anyMatch(m -> m.getMountPath().equals("/var/lib/kube-proxy")));
        Container init = pod.getInitContainers().get(0);
        assertEquals(List.of("/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf",
                "--hostname-override=$(NODE_NAME)", "--init-only"), init.getCommand());
        assertTrue(init.getSecurityContext().getPrivileged(), "the init container does what needs privilege");
        Map<String, String> ann = ds.getSpec().getTemplate().getMetadata().getAnnotations();
        assertEquals("true", ann.get("prometheus.io/scrape"));
        assertEquals("10249", ann.get("prometheus.io/port"));
        ConfigMap cm = one(ConfigMap.class);
        assertEquals(cm.getMetadata().getName(), pod.getVolumes().stream().filter(v -> v.getName().equals("kube-proxy"))
                .findFirst().orElseThrow().getConfigMap().getName(), "the generated ConfigMap is the one mounted");
    }

    @Test
    void theCommandLinesAreOnesKubeProxysParserTakes() throws Exception {
        DaemonSet ds = one(DaemonSet.class);
        for (Container c : List.of(ds.getSpec().getTemplate().getSpec().getContainers().get(0),
                ds.getSpec().getTemplate().getSpec().getInitContainers().get(0))) {
            List<String> args = new ArrayList<>(List.of("kube-proxy"));
            args.addAll(c.getCommand().subList(1, c.getCommand().size()));
            CommandLine.ParseResult parsed = new CommandLine(new Main()).parseArgs(args.toArray(new String[0]));
            KubeProxyCommand kp = (KubeProxyCommand) parsed.subcommand().commandSpec().userObject();
            assertEquals("/var/lib/kube-proxy/config.conf", kp.config);
            assertEquals("$(NODE_NAME)", kp.hostnameOverride, "Kubernetes expands the node name");
        }
    }

    @Test
    void theConfigMapHoldsAConfigurationAndKubeconfigWeRead(@TempDir Path tmp) throws Exception {
        ConfigMap cm = one(ConfigMap.class);
        Path f = tmp.resolve("config.conf");
        Files.writeString(f, cm.getData().get("config.conf"));
        KubeProxyConfigReader.Read read = KubeProxyConfigReader.read(f);
        assertEquals(List.of(), read.warnings(), "every field of ours applies");
        KubeProxyConfiguration c = read.config();
        assertEquals("nftables", c.mode());
        assertEquals(List.of("10.244.0.0/16"), c.clusterCIDRs());
        assertEquals(14, c.sync().masqueradeBit());
        assertEquals("0.0.0.0:10249", c.metricsBindAddress());
        assertEquals("0.0.0.0:10256", c.healthzBindAddress());
        assertEquals(List.of("primary"), c.nodePortAddresses());
        assertEquals("/var/lib/kube-proxy/kubeconfig.conf", c.clientConnection().kubeconfig());
        String kubeconfig = cm.getData().get("kubeconfig.conf");
        assertTrue(kubeconfig.contains("tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token"), kubeconfig);
        assertTrue(kubeconfig.contains("certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt"), kubeconfig);
        assertTrue(kubeconfig.contains("server: https://"), "the control plane's endpoint, not a ClusterIP");
    }

    @Test
    void thePermissionsAreKubeProxysOwn() throws Exception {
        ClusterRoleBinding b = one(ClusterRoleBinding.class);
        assertEquals("system:node-proxier", b.getRoleRef().getName());
        assertEquals("nftproxy", b.getSubjects().get(0).getName());
        assertEquals("nftproxy", one(DaemonSet.class).getSpec().getTemplate().getSpec().getServiceAccountName());
    }
}
