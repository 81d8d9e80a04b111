package io.nftproxy.proxy.kernel;

import java.net.InetSocketAddress;
import java.nio.file.Path;

import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.config.ProxyConfig;
import io.nftproxy.proxy.server.ProxyServer;
import io.nftproxy.proxy.source.ManifestSource;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.sync.SyncListener;

/** The daemon in the topology's node on a directory of manifests, as node-a: started; closed with its parts. */
record Daemon(NftClient nft, ManifestSource source, ProxyServer server) implements AutoCloseable {

    /** Metrics and health on {@code metrics} and {@code health} (null: not served; port 0: any). */
    static Daemon start(Topology topo, Path manifests, ProxyConfig cfg, InetSocketAddress metrics, InetSocketAddress health)
            throws Exception {
        ObjectStore store = new ObjectStore("node-a");
        NftClient nft = NftClient.open(topo.node.ns());
        ManifestSource source = null;
        ProxyServer server = null;
        try {
            source = new ManifestSource(manifests, store);
            server = new ProxyServer(cfg, store, nft, topo.node.ns(), metrics, health, new SyncListener() { });
            source.start(true);
            server.start();
            return new Daemon(nft, source, server);
        } catch (Exception | Error e) {
            try (nft; ManifestSource s = source; ProxyServer p = server) {
                throw e;
            }
        }
    }

    /** Any free port on the loopback address. */
    static InetSocketAddress anyPort() {
        return new InetSocketAddress("127.0.0.1", 0);
    }

    @Override
    public void close() throws Exception {
        try (nft; source; server) {
            // closed in reverse: the server, the source, the client
        }
    }
}
