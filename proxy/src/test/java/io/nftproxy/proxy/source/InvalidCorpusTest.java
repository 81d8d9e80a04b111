package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.testing.FakeNfTables;
import io.nftproxy.proxy.manifest.Yaml;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.PartialSyncPropertyTestAccess;
import io.nftproxy.proxy.sync.SyncResult;
import io.nftproxy.proxy.sync.Syncer;

/**
 * A generated corpus of over a thousand invalid Services (each field broken one way or another)
 * among valid ones, in one manifest stream: every invalid one is named with its reason, every
 * valid one is programmed, and the sync succeeds.
 */
class InvalidCorpusTest {
    /** Broken specs: a field and the way it is broken, with a fragment of the reason expected. */
    static final String[][] BROKEN = {
        {"{clusterIP: %s, ports: [{port: 80}]}", "invalid cluster IP", "10.96.0.300", "fd00::zz", "garbage", "10.96.0", "1.2.3.4.5"},
        {"{clusterIP: 10.96.9.9, ports: [{port: %s}]}", "port", "0", "-1", "65536", "70000", "http", "8o", "99999999999"},
        {"{clusterIP: 10.96.9.9, ports: [{port: 80, protocol: %s}]}", "unknown protocol", "ICMP", "tcpp", "GRE", "7"},
        {"{clusterIP: 10.96.9.9, type: NodePort, ports: [{port: 80, nodePort: %s}]}", "nodePort", "-5", "65536", "abc", "100000"},
        {"{clusterIP: 10.96.9.9, externalIPs: [%s], ports: [{port: 80}]}", "external IP", "300.1.1.1", "nope", "\"\"", "1.1.1"},
        {"{clusterIP: 10.96.9.9, ports: %s}", "ports", "80", "\"x\"", "{port: 80}", "[]", "[[80]]"},
        {"%s", "spec", "[]", "\"text\"", "42", "null"},
    };

    @Test
    void everyInvalidServiceIsNamedAndEveryValidOneIsProgrammed() throws Exception {
        Random r = new Random(4242);
        StringBuilder yaml = new StringBuilder();
        List<String> bad = new ArrayList<>();
        List<Integer> good = new ArrayList<>();
        List<String> specs = new ArrayList<>();
        int n = 0;
        for (int round = 0; bad.size() < 1100; round++) {
            for (String[] b : BROKEN) {
                for (int v = 2; v < b.length; v++) {
                    String name = "bad-" + n++;
                    String spec = String.format(b[0], b[v]);
                    yaml.append("kind: Service\nmetadata: {name: ").append(name).append(", namespace: corpus}\nspec: ").append(spec)
                            .append("\n---\n");
                    bad.add(name);
                    specs.add(spec);
                    if (r.nextInt(3) == 0) {
                        int g = good.size();
                        yaml.append("kind: Service\nmetadata: {name: good-").append(g).append(", namespace: corpus}\nspec: {clusterIP: 10.97.")
                                .append(g / 250).append('.').append(g % 250 + 1).append(", ports: [{name: http, port: 80}]}\n---\n")
                                .append("kind: EndpointSlice\nmetadata: {name: good-").append(g)
                                .append("-x, namespace: corpus, labels: {kubernetes.io/service-name: good-").append(g)
                                .append("}}\naddressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints: [{addresses: [10.244.")
                                .append(g / 250).append('.').append(g % 250 + 1).append("]}, {addresses: [not-an-ip]}]\n---\n");
                        good.add(g);
                    }
                }
            }
        }
        ObjectStore store = new ObjectStore("node-a");
        List<String> problems = new ArrayList<>();
        // A thousand error lines would drown the build's log: the assertions below read the errors.
        ch.qos.logback.classic.Logger log = (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(ObjectStore.class);
        ch.qos.logback.classic.Level level = log.getLevel();
        log.setLevel(ch.qos.logback.classic.Level.OFF);
        ObjectStore.Snapshot snap;
        try {
            Yaml.documents(yaml.toString()).forEach(d -> KubeModel.objects(d, problems::add).forEach(store::put));
            snap = store.snapshot();
        } finally {
            log.setLevel(level);
        }
        Map<String, String> errors = new HashMap<>();
        snap.errors().forEach((problem, message) -> errors.put(problem.subject(), message)); // by the object's name
        List<String> unnamed = new ArrayList<>();
        for (int i = 0; i < bad.size(); i++) {
            if (!errors.containsKey("Service corpus/" + bad.get(i))) {
                unnamed.add(specs.get(i));
            }
        }
        assertEquals(List.of(), unnamed.stream().distinct().toList(), "invalid services not named");
        for (String name : bad) {
            String key = "Service corpus/" + name;
            assertTrue(errors.get(key).startsWith(key + ": ") && errors.get(key).length() > key.length() + 4,
                    "with a reason: " + errors.get(key));
        }
        for (int g : good) {
            assertTrue(snap.state().services().containsKey(new ServicePortName("corpus", "good-" + g, "http", Protocol.TCP)),
                    "good-" + g + " is kept");
            assertTrue(errors.keySet().stream().anyMatch(k -> k.equals("EndpointSlice corpus/good-" + g + "-x")),
                    "its garbage endpoint is named (the rest of the slice kept)");
        }
        FakeNfTables fake = new FakeNfTables();
        SyncResult result = new Syncer(fake, new NftRenderer(PartialSyncPropertyTestAccess.CFG), "nftproxy").sync(snap.state(), null);
        assertEquals(List.of(), result.rejectedServices());
        String table = fake.readTable(Family.IP, "nftproxy").toString();
        for (int g : good) {
            assertTrue(table.contains("10.97." + (g / 250) + "." + (g % 250 + 1) + " . tcp . 80 . 0x00000000 comment \"corpus/good-" + g + ":http\""), "good-" + g + " is programmed");
        }
        assertTrue(bad.size() >= 1000 && good.size() >= 300, bad.size() + " invalid, " + good.size() + " valid");
    }
}
