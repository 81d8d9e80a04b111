package io.nftproxy.proxy.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.proxy.config.KubeProxyConfigReader;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.metrics.MetricsEndpoints;
import io.nftproxy.proxy.metrics.ProxyMetrics;
import io.nftproxy.proxy.iptables.IptablesRenderer;
import io.nftproxy.proxy.model.Cidr;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.source.Kubeconfig;
import io.nftproxy.proxy.source.ManifestSource;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.source.ProxySelection;
import io.nftproxy.proxy.sync.DryRun;
import io.nftproxy.proxy.sync.SyncLoop;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;
import io.prometheus.client.exporter.common.TextFormat;
import picocli.CommandLine.Command;

/**
 * The whole path without a kernel: the demo's manifests are read, modelled, rendered to both
 * backends and encoded into netlink messages, and nothing is committed. It needs no root, so it
 * answers "does this build work on this machine", and the build runs it to record the classes
 * a run loads into the start-up archive ({@code -XX:ArchiveClassesAtExit}).
 */
@Command(name = "selftest", mixinStandardHelpOptions = true,
        description = "Run the whole path on the demo manifests without committing (no root needed).")
final class SelftestCommand implements Callable<Integer> {

    @Override
    public Integer call() throws Exception {
        Path dir = DemoManifests.examples();
        try {
            ProxyConfig cfg = ProxyConfig.builder("demo-node").nodeIPs(List.of(Inet.parse("192.168.50.2")))
                    .clusterCIDRs(List.of(Cidr.parse("10.244.0.0/16"))).serviceCIDRs(List.of(Cidr.parse("10.96.0.0/16"))).build();
            ObjectStore store = new ObjectStore(cfg.hostname());
            AtomicLong ops = new AtomicLong();
            AtomicLong textChars = new AtomicLong();
            Syncer syncer = new Syncer(null, new NftRenderer(cfg), cfg.table());
            syncer.commitThrough(new DryRun(tx -> {
                ops.addAndGet(tx.size());
                textChars.addAndGet(tx.toString().length());
            }));
            SyncResult r;
            // kube-proxy's metrics as a daemon keeps them, and one scrape of them: the JVM's series
            // (the management classes) and the writers load here as they do on a node.
            ProxyMetrics metrics = new ProxyMetrics(store);
            try (ManifestSource src = new ManifestSource(dir, store);
                 SyncLoop loop = new SyncLoop(store, syncer, cfg.minSyncPeriod(), cfg.fullSyncPeriod(), metrics)) {
                src.start(false);
                r = loop.syncOnce(true);
            }
            long series = MetricsEndpoints.scrape(metrics.registry(), TextFormat.CONTENT_TYPE_004).lines()
                    .filter(l -> !l.startsWith("#")).count();
            ObjectStore.Snapshot snap = store.snapshot();
            int restoreLines = 0;
            for (IpFamily f : IpFamily.values()) {
                restoreLines += new IptablesRenderer(cfg).render(snap.state(), f).restore().split("\n").length;
            }
            String kernel = kernelSocket();
            String api = apiClientPath();
            int ports = snap.state().services().size();
            if (ports == 0 || ops.get() == 0 || !snap.errors().isEmpty() || !r.rejectedServices().isEmpty() || series == 0) {
                System.err.println("selftest: FAILED: " + ports + " service ports, " + ops.get() + " operations, errors "
                        + snap.errors().values() + ", rejected " + r.rejectedServices() + ", " + series + " metric series");
                return 1;
            }
            System.out.println("selftest: ok: " + ports + " service ports -> " + ops.get() + " nf_tables operations in "
                    + r.commit().messages() + " netlink messages (" + r.commit().bytes() + " bytes, " + textChars.get()
                    + " chars as nft text), " + restoreLines + " lines of iptables-restore input; " + series + " metric series; " + kernel
                    + "; " + api);
            return 0;
        } finally {
            DemoManifests.deleteTree(dir);
        }
    }

    /**
     * kube-proxy's path to its API server up to the first request: its config file read, a
     * kubeconfig loaded, the client built and one listing tried against a port where nothing
     * listens (refused at once, no retry). A node's start-up runs these classes; the build records
     * them into the start-up archive with the rest (measured: 4,510 classes came from the jar, not
     * the archive, when only the sync path was recorded).
     */
    private static String apiClientPath() throws IOException {
        KubeProxyConfigReader.parse("""
                apiVersion: kubeproxy.config.k8s.io/v1alpha1
                kind: KubeProxyConfiguration
                clientConnection: {kubeconfig: /var/lib/kube-proxy/kubeconfig.conf, qps: 5, burst: 10}
                conntrack: {maxPerCore: null, min: null, tcpEstablishedTimeout: 24h0m0s}
                mode: ""
                syncPeriod: 0s
                """, "selftest", Map.of());
        Path kubeconfig = Files.createTempFile("nftproxy-selftest", ".kubeconfig");
        try {
            Files.writeString(kubeconfig, """
                    apiVersion: v1
                    kind: Config
                    clusters:
                    - cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
                      name: selftest
                    contexts:
                    - context: {cluster: selftest, user: selftest}
                      name: selftest
                    current-context: selftest
                    users:
                    - name: selftest
                      user: {token: selftest}
                    """);
            Config cfg = Kubeconfig.load(kubeconfig, null);
            cfg.setRequestRetryBackoffLimit(0);
            try (KubernetesClient client = new KubernetesClientBuilder().withConfig(cfg).build()) {
                client.services().inAnyNamespace().withLabelSelector(ProxySelection.DEFAULT.labelSelector()).list();
                return "API client: an answer from port 1?";
            } catch (KubernetesClientException e) {
                return "API client path exercised";
            }
        } finally {
            Files.deleteIfExists(kubeconfig);
        }
    }

    /** Opens (and closes) a netlink socket, which loads the native bindings; no privilege is needed to open one. */
    private static String kernelSocket() {
        try (NftClient c = NftClient.open()) {
            return "netlink socket opened";
        } catch (NftException e) {
            return "netlink socket not available (" + e.getMessage() + ")";
        }
    }
}
