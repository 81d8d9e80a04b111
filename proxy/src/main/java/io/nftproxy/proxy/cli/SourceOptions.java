package io.nftproxy.proxy.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.source.Source;
import picocli.CommandLine.Option;

/** Where Services, EndpointSlices and Nodes come from: a manifest directory or a cluster. */
final class SourceOptions {
    /** How long a one-shot command waits for an API server that does not answer. */
    static final Duration ONE_SHOT_LISTING = Duration.ofSeconds(60);

    @Option(names = "--manifests", paramLabel = "DIR",
            description = "Read Services, EndpointSlices and Nodes from this directory (run watches it).")
    Path manifests;

    @Option(names = "--kubeconfig", paramLabel = "PATH", description = "Read them from a cluster through this kubeconfig.")
    Path kubeconfig;

    @Option(names = "--master", paramLabel = "URL", description = "The API server's address (over the kubeconfig's).")
    String master;

    @Option(names = "--in-cluster", description = "Read them from the cluster this pod runs in (service account, through"
            + " the kubernetes Service's ClusterIP: prefer a kubeconfig with the control plane's address).")
    boolean inCluster;

    /** How many sources were given ({@code --master} alone is a cluster too). */
    int given() {
        boolean cluster = kubeconfig != null || master != null;
        return (manifests != null ? 1 : 0) + (cluster ? 1 : 0) + (inCluster ? 1 : 0);
    }

    /** The source given, not reading yet (see {@link Launch#openSource}). */
    Source open(ObjectStore store) throws IOException {
        return applyTo(Launch.builder()).build().openSource(store);
    }

    Launch.Builder applyTo(Launch.Builder l) {
        return l.manifests(manifests).kubeconfig(kubeconfig).master(master).inCluster(inCluster);
    }

    /** Reads the source once: for one-shot commands, which give up on an API server that does not answer. */
    static void readOnce(Source source) throws IOException, InterruptedException {
        try {
            source.listAndWatch(false).get(ONE_SHOT_LISTING.toSeconds(), TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new IOException(source.where() + " gave no complete listing within " + ONE_SHOT_LISTING.toSeconds() + " s");
        } catch (ExecutionException e) {
            throw new IOException(source.where() + ": " + e.getCause().getMessage(), e.getCause());
        }
    }
}
