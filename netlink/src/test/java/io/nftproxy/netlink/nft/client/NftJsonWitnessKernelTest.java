package io.nftproxy.netlink.nft.client;

import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.Fixture;
import io.nftproxy.netlink.nft.Op;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.client.NftClient;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import io.nftproxy.testkit.Json;
import io.nftproxy.testkit.TestNetns;

/**
 * What we write, read by an independent witness: {@code nft -j list ruleset}, parsed and compared
 * field by field with the objects we committed.
 */
class NftJsonWitnessKernelTest {
    private static TestNetns ns;
    private static Fixture fixture;
    private static List<Map<String, Object>> json;

    @BeforeAll
    @SuppressWarnings("unchecked")
    static void commitFixture() throws Exception {
        ns = TestNetns.create("nftp-js");
        fixture = new Fixture();
        try (NftClient c = NftClient.open(ns.ns())) {
            c.commit(fixture.transaction());
        }
        json = new ArrayList<>();
        for (Object o : ns.nftJson()) {
            json.add((Map<String, Object>) o);
        }
    }

    @AfterAll
    static void dropNamespace() {
        if (ns != null) {
            ns.close();
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> objects(String kind) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> o : json) {
            if (o.containsKey(kind)) {
                out.add((Map<String, Object>) o.get(kind));
            }
        }
        return out;
    }

    private static Map<String, Object> find(String kind, Family f, String name) {
        for (Map<String, Object> o : objects(kind)) {
            if (f.keyword().equals(o.get("family")) && name.equals(o.get("name"))) {
                return o;
            }
        }
        return null;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> ruleExprs(Family f, String chain) {
        List<Object> out = new ArrayList<>();
        for (Map<String, Object> r : objects("rule")) {
            if (f.keyword().equals(r.get("family")) && chain.equals(r.get("chain"))) {
                out.add(r.get("expr"));
            }
        }
        return out;
    }

    /** Whether {@code expected} occurs somewhere inside {@code actual}, maps compared as subsets. */
    @SuppressWarnings("unchecked")
    static boolean deepContains(Object actual, Object expected) {
        if (matches(actual, expected)) {
            return true;
        }
        if (actual instanceof Map<?, ?> m) {
            for (Object v : m.values()) {
                if (deepContains(v, expected)) {
                    return true;
                }
            }
        } else if (actual instanceof List<?> l) {
            for (Object v : l) {
                if (deepContains(v, expected)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean matches(Object actual, Object expected) {
        if (expected instanceof Map<?, ?> em) {
            if (!(actual instanceof Map<?, ?> am)) {
                return false;
            }
            for (Map.Entry<?, ?> e : em.entrySet()) {
                if (!am.containsKey(e.getKey()) || !matches(am.get(e.getKey()), e.getValue())) {
                    return false;
                }
            }
            return true;
        }
        if (expected instanceof List<?> el) {
            if (!(actual instanceof List<?> al) || al.size() != el.size()) {
                return false;
            }
            for (int i = 0; i < el.size(); i++) {
                if (!matches(al.get(i), el.get(i))) {
                    return false;
                }
            }
            return true;
        }
        return expected == null ? actual == null : expected.equals(actual);
    }

    private static void assertRuleHas(Family f, String chain, int index, String expectedJson) {
        List<Object> rules = ruleExprs(f, chain);
        assertTrue(index < rules.size(), chain + " has rule " + index);
        Object want = Json.parse(expectedJson);
        assertTrue(deepContains(rules.get(index), want),
                f.keyword() + " " + chain + " rule " + index + " should contain " + expectedJson + " but is " + rules.get(index));
    }

    @Test
    void tablesAndChains() {
        Set<String> tables = new HashSet<>();
        for (Map<String, Object> t : objects("table")) {
            tables.add(t.get("family") + " " + t.get("name"));
        }
        assertEquals(Set.of("ip nftp", "ip6 nftp", "inet nftp"), tables);

        int chains = 0;
        for (Op op : fixture.transaction().ops()) {
            if (!(op.object() instanceof Chain c)) {
                continue;
            }
            chains++;
            Map<String, Object> j = find("chain", c.family(), c.name());
            assertNotNull(j, "nft sees chain " + c.name());
            assertEquals(c.table(), j.get("table"));
            if (c.base() == null) {
                assertTrue(!j.containsKey("hook"), c.name() + " is a regular chain");
            } else {
                assertEquals(c.base().type(), j.get("type"), c.name());
                assertEquals(c.base().hook().keyword(), j.get("hook"), c.name());
                assertEquals((long) c.base().priority(), j.get("prio"), c.name());
                assertEquals(c.base().policy().kind().keyword(), j.get("policy"), c.name());
            }
        }
        assertEquals(chains, objects("chain").size(), "no chain more, none less");
    }

    @Test
    void setsMapsAndElements() {
        Map<String, Object> svc = find("set", Family.IP, "svc-ips");
        assertEquals("ipv4_addr", svc.get("type"));
        assertEquals(Set.of("10.96.0.1", "10.96.0.10"), new HashSet<>((List<?>) svc.get("elem")));
        assertEquals("cluster IPs", svc.get("comment"));

        Map<String, Object> services = find("map", Family.IP, "services");
        assertEquals(List.of("ipv4_addr", "inet_proto", "inet_service"), services.get("type"));
        assertEquals("verdict", services.get("map"));
        assertEquals(3, ((List<?>) services.get("elem")).size());
        assertTrue(deepContains(services.get("elem"), Json.parse(
                "[{\"concat\": [\"10.96.0.10\", \"tcp\", 80]}, {\"goto\": {\"target\": \"svc-default/web/tcp/http\"}}]")));
        assertTrue(deepContains(services.get("elem"), Json.parse(
                "[{\"concat\": [\"10.96.0.11\", \"udp\", 53]}, {\"jump\": {\"target\": \"no-endpoints\"}}]")));
        assertTrue(deepContains(services.get("elem"), Json.parse(
                "[{\"concat\": [\"10.96.0.12\", \"sctp\", 3868]}, {\"drop\": null}]")));

        Map<String, Object> cidrs = find("set", Family.IP, "cluster-cidrs");
        assertEquals(List.of("interval"), cidrs.get("flags"));
        assertTrue(deepContains(cidrs.get("elem"), Json.parse("{\"prefix\": {\"addr\": \"10.0.0.0\", \"len\": 8}}")));

        Map<String, Object> aff = find("set", Family.IP, "affinity-a");
        assertTrue(((List<?>) aff.get("flags")).contains("timeout"));
        assertEquals(10800L, aff.get("timeout"));
        assertTrue(deepContains(aff.get("elem"), Json.parse("{\"elem\": {\"val\": \"192.168.7.7\", \"timeout\": 60}}")));

        Map<String, Object> eps = find("map", Family.IP, "endpoints");
        assertEquals("inet_service", eps.get("type"));
        assertEquals("ipv4_addr", eps.get("map"));
        assertTrue(deepContains(eps.get("elem"), Json.parse("[80, \"10.1.0.5\"]")));
        assertTrue(deepContains(eps.get("elem"), Json.parse("[443, \"10.1.0.6\"]")));

        Map<String, Object> marks = find("map", Family.IP, "marks");
        assertEquals("mark", marks.get("map"));
        assertTrue(deepContains(marks.get("elem"), Json.parse("[\"10.1.0.5\", 16384]")));

        Map<String, Object> v6 = find("map", Family.IP6, "services6");
        assertEquals(List.of("ipv6_addr", "inet_proto", "inet_service"), v6.get("type"));
        assertTrue(deepContains(v6.get("elem"), Json.parse("{\"concat\": [\"fd00:96::10\", \"tcp\", 80]}")));
    }

    @Test
    void ruleCountsPerChain() {
        for (Op op : fixture.transaction().ops()) {
            if (op.object() instanceof Chain c) {
                long ours = fixture.transaction().ops().stream().filter(o -> o.object() instanceof Rule r
                        && r.family() == c.family() && r.chain().equals(c.name())).count();
                assertEquals(ours, ruleExprs(c.family(), c.name()).size(), "rules in " + c.family() + " " + c.name());
            }
        }
    }

    @Test
    void everyExpressionAsNftUnderstandsIt() {
        // payload, meta, lookup (verdict map) as one concatenated key
        assertRuleHas(Family.IP, "prerouting", 0, "{\"vmap\": {\"key\": {\"concat\": ["
                + "{\"payload\": {\"protocol\": \"ip\", \"field\": \"daddr\"}}, {\"meta\": {\"key\": \"l4proto\"}},"
                + "{\"payload\": {\"protocol\": \"th\", \"field\": \"dport\"}}]}, \"data\": \"@services\"}}");
        // fib, cmp, counter, jump, comment
        assertRuleHas(Family.IP, "prerouting", 1, "{\"match\": {\"op\": \"==\", \"left\": {\"fib\": "
                + "{\"result\": \"type\", \"flags\": [\"daddr\"]}}, \"right\": \"local\"}}");
        assertRuleHas(Family.IP, "prerouting", 1, "{\"counter\": {\"packets\": 0, \"bytes\": 0}}");
        assertRuleHas(Family.IP, "prerouting", 1, "{\"jump\": {\"target\": \"no-endpoints\"}}");
        // data map lookup feeding DNAT
        assertRuleHas(Family.IP, "prerouting", 2, "{\"dnat\": {\"addr\": {\"map\": {\"key\": {\"payload\": "
                + "{\"protocol\": \"th\", \"field\": \"dport\"}}, \"data\": \"@endpoints\"}}}}");
        // set membership
        assertRuleHas(Family.IP, "output", 0, "{\"match\": {\"left\": {\"payload\": {\"protocol\": \"ip\", "
                + "\"field\": \"daddr\"}}, \"right\": \"@svc-ips\"}}");
        // inverted lookup; numgen with byteorder and ordered compare; goto
        assertRuleHas(Family.IP, "svc-default/web/tcp/http", 0, "{\"match\": {\"op\": \"!=\", \"right\": \"@cluster-cidrs\"}}");
        assertRuleHas(Family.IP, "svc-default/web/tcp/http", 1, "{\"match\": {\"op\": \"<\", \"left\": {\"numgen\": "
                + "{\"mode\": \"random\", \"mod\": 2}}, \"right\": 1}}");
        assertRuleHas(Family.IP, "svc-default/web/tcp/http", 1, "{\"goto\": {\"target\": \"ep-10.1.0.5\"}}");
        // immediate + nat with address and port
        assertRuleHas(Family.IP, "ep-10.1.0.5", 1, "{\"dnat\": {\"addr\": \"10.1.0.5\", \"port\": 8080}}");
        // meta load, bitwise, meta set
        assertRuleHas(Family.IP, "mark-for-masquerade", 0, "{\"mangle\": {\"key\": {\"meta\": {\"key\": \"mark\"}}, "
                + "\"value\": {\"|\": [{\"meta\": {\"key\": \"mark\"}}, 16384]}}}");
        assertRuleHas(Family.IP, "postrouting", 0, "{\"match\": {\"left\": {\"&\": [{\"meta\": {\"key\": \"mark\"}}, 16384]}, "
                + "\"right\": 0}}");
        assertRuleHas(Family.IP, "postrouting", 0, "{\"return\": null}");
        assertRuleHas(Family.IP, "postrouting", 2, "{\"masquerade\": {\"flags\": \"fully-random\"}}");
        // data map into meta set
        assertRuleHas(Family.IP, "filter-input", 0, "{\"mangle\": {\"key\": {\"meta\": {\"key\": \"mark\"}}, "
                + "\"value\": {\"map\": {\"data\": \"@marks\"}}}}");
        // ct with bitwise flags
        assertRuleHas(Family.IP, "filter-input", 1, "{\"match\": {\"left\": {\"ct\": {\"key\": \"state\"}}, "
                + "\"right\": [\"established\", \"related\"]}}");
        assertRuleHas(Family.IP, "filter-input", 2, "{\"match\": {\"left\": {\"ct\": {\"key\": \"status\"}}, "
                + "\"right\": \"dnat\"}}");
        // reject flavours
        assertRuleHas(Family.IP, "no-endpoints", 0, "{\"reject\": {\"type\": \"tcp reset\"}}");
        assertRuleHas(Family.IP, "no-endpoints", 1, "{\"reject\": {\"type\": \"icmp\", \"expr\": \"port-unreachable\"}}");
        assertRuleHas(Family.IP6, "reject6", 0, "{\"reject\": {\"type\": \"icmpv6\", \"expr\": \"port-unreachable\"}}");
        assertRuleHas(Family.INET, "input", 0, "{\"reject\": {\"type\": \"icmpx\", \"expr\": \"port-unreachable\"}}");
        // dynset
        assertRuleHas(Family.IP, "affinity-check", 0, "{\"set\": {\"op\": \"update\", \"set\": \"@affinity-a\", "
                + "\"elem\": {\"elem\": {\"val\": {\"payload\": {\"protocol\": \"ip\", \"field\": \"saddr\"}}, \"timeout\": 10800}}}}");
        // IPv6 DNAT and inet DNAT guarded by nfproto
        assertRuleHas(Family.IP6, "ep-fd00--5", 0, "{\"dnat\": {\"addr\": \"fd00::5\", \"port\": 8080}}");
        assertRuleHas(Family.INET, "prerouting", 0, "{\"dnat\": {\"family\": \"ip\", \"addr\": \"10.1.0.7\"}}");
        // (nft folds the "meta nfproto ipv4" guard into the ip payload match it protects.)
        assertRuleHas(Family.INET, "prerouting", 0, "{\"match\": {\"left\": {\"payload\": {\"protocol\": \"ip\", "
                + "\"field\": \"daddr\"}}, \"right\": \"10.96.0.30\"}}");
        // a rule comment
        Map<String, Object> commented = null;
        for (Map<String, Object> r : objects("rule")) {
            if ("node ports".equals(r.get("comment"))) {
                commented = r;
            }
        }
        assertNotNull(commented, "the rule comment reaches nft");
        assertEquals("prerouting", commented.get("chain"));
        // nft 1.0.6 leaves chain comments out of its JSON; its text listing shows them.
        assertTrue(ns.exec("nft", "list", "chain", "ip", "nftp", "filter-input").contains("comment \"accepts by default\""));
    }
}
