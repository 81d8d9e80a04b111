package io.nftproxy.proxy.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.DataType;
import io.nftproxy.netlink.nft.Elements;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Table;
import io.nftproxy.netlink.nft.Transaction;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.server.ProxyServer;

/**
 * Another nftables user of the node commits all the time (as a CNI plugin does while pods
 * start) in a table of its own, while the daemon makes its first sync, in batches: its commits
 * inside ours are not taken for drift (no rebuild in one batch, which would hold it for the whole
 * table) but ask for a check, a re-assertion later; the services answer.
 */
class BusyNeighbourKernelTest {
    private static final Duration SYNCED = Duration.ofSeconds(30);

    @Test
    void anotherUsersCommitsInOursAskForACheckNotARebuild(@TempDir Path dir) throws Exception {
        try (Topology topo = new Topology()) {
            topo.serve("10.244.1.2", 8080);
            Manifests m = new Manifests();
            for (int i = 0; i < 400; i++) {
                String[] eps = new String[i == 0 ? 1 : 10];
                for (int j = 0; j < eps.length; j++) {
                    eps[j] = "10.244." + (1 + j) + "." + (2 + i % 200) + "@node-b";
                }
                m.service("svc-" + i, "10.96." + (1 + i / 250) + "." + (1 + i % 250), "[{name: http, port: 80, targetPort: 8080}]")
                        .slice("svc-" + i, "a", "IPv4", "[{name: http, port: 8080, protocol: TCP}]", eps);
            }
            m.write(dir, "services.yaml");

            AtomicReference<Exception> neighbourFailed = new AtomicReference<>();
            AtomicInteger neighbourCommits = new AtomicInteger();
            Thread neighbour;
            try (NftClient theirs = NftClient.open(topo.node.ns())) {
                NftSet set = NftSet.set(Family.INET, "neighbour", "probe", DataType.IPV4_ADDR);
                theirs.commit(new Transaction().add(new Table(Family.INET, "neighbour")).add(set));
                SetElement el = SetElement.of(Bytes.ip(Inet.parse("192.0.2.1")));
                neighbour = new Thread(() -> {
                    try {
                        for (boolean add = true; !Thread.currentThread().isInterrupted(); add = !add) {
                            theirs.commit(add ? new Transaction().add(Elements.of(set, List.of(el)))
                                    : new Transaction().delete(Elements.of(set, List.of(el))));
                            neighbourCommits.incrementAndGet();
                            LockSupport.parkNanos(200_000); // a commit every fraction of a millisecond
                        }
                    } catch (Exception e) {
                        neighbourFailed.set(e);
                    }
                }, "neighbour");
                neighbour.start();
                try {
                    try (Daemon d = Daemon.start(topo, dir, OperationsKernelTest.config(), Daemon.anyPort(), Daemon.anyPort())) {
                        ProxyServer server = d.server();
                        Topology.eventually(SYNCED, () -> topo.tcp(topo.node, null, "10.96.1.1", 80).result()
                                == Topology.Outcome.Result.ANSWERED, "the service answers after the first sync");
                        Topology.eventually(SYNCED, () -> metric(server, "nftproxy_drift_checks_total") >= 1,
                                "the neighbour's commits inside ours asked for a check");
                        assertEquals(0.0, metric(server, "nftproxy_drift_repairs_total"), "and for no rebuild");
                        assertEquals(0.0, metric(server, "kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family=\"IPv4\"}"));
                    }
                } finally {
                    neighbour.interrupt();
                    neighbour.join(10_000);
                }
                assertEquals(null, neighbourFailed.get(), "the neighbour's commits all went in");
                assertEquals(true, neighbourCommits.get() > 100, "the neighbour committed throughout: " + neighbourCommits.get());
            }
        }
    }

    private static double metric(ProxyServer server, String series) throws Exception {
        return OperationsKernelTest.scrape(server.metricsPort()).getOrDefault(series, -1.0);
    }
}
