package io.nftproxy.proxy.apiserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.testkit.Kernel;
import io.nftproxy.testkit.TestNetns;

/**
 * The image, run as kube-proxy's DaemonSet runs it: podman on a node's network namespace (the
 * pod's host network), kubeadm's ConfigMap and the service account mounted where kubeadm and the
 * kubelet mount them, first {@code kube-proxy --init-only} privileged (the init container), then
 * kube-proxy's command line with NET_ADMIN only and a read-only root. The image is built by
 * {@code deploy/image/build} ({@code .ci/run} builds it before the tests).
 */
class ImageKernelTest {
    static final String IMAGE = System.getProperty("nftproxy.image", "localhost/nftproxy:0.1.0");

    static void eventually(Callable<Boolean> check, String what) throws Exception {
        Sandbox.eventually(Duration.ofSeconds(90), check, what);
    }

    /** The kernel and the image: skipped without them, except in CI, where that fails. */
    static void requireImage() {
        Kernel.require();
        if (!imagePresent()) {
            String why = "no image " + IMAGE + ": build it with deploy/image/build";
            if (Kernel.required()) {
                throw new AssertionError(why);
            }
            Assumptions.abort(why);
        }
    }

    static boolean imagePresent() {
        try {
            TestNetns.run(List.of("podman", "image", "exists", IMAGE), null);
            return true;
        } catch (IllegalStateException e) {
            return false;
        }
    }

    /** podman run with the DaemonSet's mounts, on the node's network namespace. */
    static List<String> podman(ControlPlane k8s, Path dir, String name, List<String> security, List<String> command) throws Exception {
        Path lock = Files.createDirectories(dir.resolve("run-nftproxy"));
        // runc, and limits below this machine's: it runs without CAP_SYS_RESOURCE (podman's default
        // limits are above its own) and with cgroups v1 and v2 mixed, which crun refuses.
        List<String> cmd = new ArrayList<>(List.of("podman", "--runtime", "runc", "run", "--ulimit", "nofile=8192:8192",
                "--ulimit", "nproc=4096:4096", "--name", name, "--network", "ns:/run/netns/" + k8s.node.name(),
                "-v", k8s.configMap() + ":/var/lib/kube-proxy:ro",
                "-v", k8s.serviceAccount() + ":/var/run/secrets/kubernetes.io/serviceaccount:ro",
                "-v", lock + ":/run/nftproxy", "--tmpfs", "/tmp:rw,exec", "-e", "NODE_NAME=node-a"));
        cmd.addAll(security);
        cmd.add("--entrypoint");
        cmd.add(command.get(0));
        cmd.add(IMAGE);
        cmd.addAll(command.subList(1, command.size()));
        return cmd;
    }

    static final List<String> KUBEADM = List.of("/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf",
            "--hostname-override=node-a");

    /** The init container: privileged, --init-only, exits 0 having set conntrack's sysctls. */
    static void initContainer(ControlPlane k8s, Path dir, String name) throws Exception {
        List<String> init = new ArrayList<>(KUBEADM);
        init.add("--init-only");
        String initOut = TestNetns.run(podman(k8s, dir, name + "-init", List.of("--rm", "--privileged"), init), null);
        assertEquals("86400", k8s.node.exec("sysctl", "-n", "net.netfilter.nf_conntrack_tcp_timeout_established").trim(),
                initOut);
    }

    @Test
    @SuppressWarnings("try") // the container runs while the block does
    void theImageRunsAsKubeProxysDaemonSetRunsIt(@TempDir Path dir) throws Exception {
        requireImage();
        String name = "nftproxy-test-" + Long.toHexString(System.nanoTime());
        try (ControlPlane k8s = new ControlPlane(dir, "")) {
            k8s.admin.services().inNamespace("shop").resource(ApiServerAwayKernelTest.service("cart", "10.96.7.1")).create();
            initContainer(k8s, dir, name);

            try (AutoCloseable proxy = proxyContainer(k8s, dir, name)) {
                assertTrue(k8s.node.exec("nft", "list", "table", "ip", "nftproxy").contains("10.96.7.1"));
                NodeProcess.Answer metrics = NodeProcess.fetch(k8s.node.ns(), 10249, "/metrics");
                assertTrue(metrics.body().contains("kubeproxy_sync_proxy_rules_last_timestamp_seconds"), metrics.body());
                String rules = k8s.node.exec("nft", "list", "table", "ip", "nftproxy");
                // The launcher's choices for a daemon, as measured in bench --footprint (docs/benchmarks.md):
                // the JVM runs them, with the image's archive of the product's classes.
                List<String> jvm = daemonJvmOptions(name);
                for (String option : List.of("-XX:+UseSerialGC", "-XX:NewRatio=8", "-XX:TieredStopAtLevel=1", "-XX:TrimNativeHeapInterval=5000",
                        "-XX:SharedArchiveFile=/opt/nftproxy/nftproxy.jsa")) {
                    assertTrue(jvm.contains(option), option + " in " + jvm);
                }
                // And what the start needed is given back once, after the first full sync.
                eventually(() -> logs(name).contains("heap after the first sync"), "the start's heap collected:\n" + logs(name));
                assertEquals(1, logs(name).split("heap after the first sync", -1).length - 1, logs(name));

                // The API server goes away: the container keeps running, alive and ready, the rules stay.
                k8s.front.down();
                eventually(() -> logs(name).contains("stopped; reconnecting"), "the lost watch is said:\n" + logs(name));
                assertEquals("true", TestNetns.run(List.of("podman", "inspect", "-f", "{{.State.Running}}", name), null).trim());
                assertEquals(200, NodeProcess.fetch(k8s.node.ns(), 10256, "/livez").code());
                assertEquals(200, NodeProcess.fetch(k8s.node.ns(), 10256, "/healthz").code());
                assertEquals(rules, k8s.node.exec("nft", "list", "table", "ip", "nftproxy"));
                assertTrue(!logs(name).contains("\tat "), "no stack traces:\n" + logs(name));
            }
        }
    }

    /**
     * The proxy's container as the DaemonSet runs it (NET_ADMIN only, read-only root), once its
     * /healthz answers 200; closing removes it.
     */
    static AutoCloseable proxyContainer(ControlPlane k8s, Path dir, String name) throws Exception {
        TestNetns.run(podman(k8s, dir, name, List.of("-d", "--read-only", "--cap-drop=all", "--cap-add=NET_ADMIN"), KUBEADM),
                null);
        AutoCloseable remove = () -> TestNetns.run(List.of("podman", "--runtime", "runc", "rm", "-f", "-t", "5", name), null);
        try {
            eventually(() -> NodeProcess.fetch(k8s.node.ns(), 10256, "/healthz").code() == 200,
                    "the container's /healthz turns 200");
            return remove;
        } catch (Exception | AssertionError e) {
            e.addSuppressed(new IllegalStateException("the container's log:\n" + logs(name)));
            remove.close();
            throw e;
        }
    }

    /** The command line of the container's process: the launcher execs the JVM, so it is the JVM's. */
    static List<String> daemonJvmOptions(String container) throws Exception {
        String pid = TestNetns.run(List.of("podman", "inspect", "-f", "{{.State.Pid}}", container), null).trim();
        return List.of(Files.readString(Path.of("/proc", pid, "cmdline")).split("\0"));
    }

    static String logs(String container) {
        return TestNetns.run(List.of("podman", "logs", container), null) + TestNetns.run(List.of("sh", "-c",
                "podman logs " + container + " 2>&1 >/dev/null"), null);
    }

    /**
     * What the image holds, asked of the image itself (its bash, the one program it has besides
     * the JVM and iptables): the runtime jlink cut, whose archive of the product's classes maps
     * (-Xshare:on refuses to start otherwise), iptables in both variants with Debian's default
     * alternative, the list of Debian's packages it was made of, and no package manager, no nft,
     * no perl, no coreutils.
     */
    @Test
    void theImageHoldsOnlyWhatRunsOnANode() {
        requireImage();
        String out = TestNetns.run(List.of("podman", "--runtime", "runc", "run", "--rm", "--read-only", "--ulimit", "nofile=8192:8192",
                "--ulimit", "nproc=4096:4096", "--entrypoint", "/bin/bash",
                IMAGE, "-c", """
                        for f in /usr/bin/apt /usr/bin/dpkg /usr/sbin/nft /usr/bin/perl /usr/bin/ls; do
                          [ -e "$f" ] && echo "present: $f"
                        done
                        [ -x /usr/sbin/iptables-legacy-restore ] && echo legacy
                        [ -x /usr/sbin/iptables-restore ] && echo restore
                        while read -r line; do [[ "$line" == MODULES=* ]] && echo "$line"; done < /opt/java/release
                        while read -r name version; do echo "package: $name"; done < /opt/nftproxy/packages
                        /opt/java/bin/java -Xshare:on -XX:SharedArchiveFile="$NFTPROXY_JSA" -cp "$NFTPROXY_JAR" -version 2>&1 \
                          && echo mapped
                        """), null);
        assertFalse(out.contains("present:"), out);
        assertTrue(out.contains("legacy") && out.contains("restore"), out);
        assertTrue(out.contains("package: iptables\n") && out.contains("package: bash\n"), "the packages it was made of: " + out);
        assertFalse(out.contains("package: dpkg\n") || out.contains("package: apt\n"), out);
        assertTrue(out.contains("MODULES=\"java.base ") && !out.contains("java.desktop"), "a runtime cut to the product's modules: " + out);
        assertTrue(out.contains("mapped"), "the class-data-sharing archive maps with the image's runtime: " + out);
    }

    /** kubeadm's file with mode: iptables: the reference backend, with the image's own iptables, NET_ADMIN only. */
    @Test
    @SuppressWarnings("try") // the container runs while the block does
    void iptablesModeRunsInTheImage(@TempDir Path dir) throws Exception {
        requireImage();
        String name = "nftproxy-test-ipt-" + Long.toHexString(System.nanoTime());
        try (ControlPlane k8s = new ControlPlane(dir, "iptables")) {
            k8s.admin.services().inNamespace("shop").resource(ApiServerAwayKernelTest.service("cart", "10.96.7.1")).create();
            initContainer(k8s, dir, name);
            try (AutoCloseable proxy = proxyContainer(k8s, dir, name)) {
                String saved = k8s.node.exec("iptables-save");
                assertTrue(saved.contains("-A KUBE-SERVICES -d 10.96.7.1/32"), saved); // no endpoints: its REJECT
                assertTrue(logs(name).contains("iptables mode"), logs(name));
            }
        }
    }
}
