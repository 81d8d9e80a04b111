package io.nftproxy.proxy.cli;

import java.nio.file.Path;

import io.nftproxy.proxy.source.KubernetesSource;
import io.nftproxy.proxy.source.ManifestSource;
import io.nftproxy.proxy.source.ObjectStore;
import picocli.CommandLine.Option;

/** Where Services, EndpointSlices and Nodes come from: a manifest directory or a cluster. */
final class SourceOptions {
    @Option(names = "--manifests", paramLabel = "DIR",
            description = "Read Services, EndpointSlices and Nodes from this directory (run watches it).")
    Path manifests;

    @Option(names = "--kubeconfig", paramLabel = "PATH", description = "Read them from a cluster through this kubeconfig.")
    Path kubeconfig;

    @Option(names = "--in-cluster", description = "Read them from the cluster this pod runs in (service account).")
    boolean inCluster;

    /** How many sources were given. */
    int given() {
        return (manifests != null ? 1 : 0) + (kubeconfig != null ? 1 : 0) + (inCluster ? 1 : 0);
    }

    /**
     * Fills {@code store} from the source given and returns it running: a manifest directory
     * watched when {@code watch}, informers that have listed once (the cluster's own, without a
     * kubeconfig). The caller closes it.
     */
    AutoCloseable start(ObjectStore store, boolean watch) throws Exception {
        if (manifests != null) {
            ManifestSource m = new ManifestSource(manifests, store);
            m.start(watch);
            return m;
        }
        KubernetesSource k = new KubernetesSource(kubeconfig, store);
        k.start();
        return k;
    }
}
