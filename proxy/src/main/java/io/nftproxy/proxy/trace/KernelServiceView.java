package io.nftproxy.proxy.trace;

import static io.nftproxy.proxy.render.TableNames.CLUSTER_IP_PORTS;
import static io.nftproxy.proxy.render.TableNames.EXTERNAL_MASQ;
import static io.nftproxy.proxy.render.TableNames.firewallAllow;
import static io.nftproxy.proxy.render.TableNames.FIREWALL_IPS;
import static io.nftproxy.proxy.render.TableNames.LOCAL_IPS;
import static io.nftproxy.proxy.render.TableNames.LOCAL_NODEPORTS;
import static io.nftproxy.proxy.render.TableNames.NODEPORT_CHAINS;
import static io.nftproxy.proxy.render.TableNames.NODEPORT_MASQ;
import static io.nftproxy.proxy.render.TableNames.NODEPORT_NO_ENDPOINT_DROP;
import static io.nftproxy.proxy.render.TableNames.NODEPORT_NO_ENDPOINT_REJECT;
import static io.nftproxy.proxy.render.TableNames.NODEPORT_NO_LOCAL_ENDPOINT;
import static io.nftproxy.proxy.render.TableNames.NO_ENDPOINT_DROP;
import static io.nftproxy.proxy.render.TableNames.NO_ENDPOINT_REJECT;
import static io.nftproxy.proxy.render.TableNames.NO_LOCAL_ENDPOINT;
import static io.nftproxy.proxy.render.TableNames.IP_FRONTEND_SETS;
import static io.nftproxy.proxy.render.TableNames.NODEPORT_FRONTEND_SETS;
import static io.nftproxy.proxy.render.TableNames.SERVICE_CHAINS;
import static io.nftproxy.proxy.render.TableNames.SERVICE_IPS;
import static io.nftproxy.proxy.render.TableNames.SERVICE_NODEPORTS;

import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.Set;
import java.util.TreeMap;

import io.nftproxy.proxy.render.TableNames;
import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.CountedElement;
import io.nftproxy.netlink.nft.CounterReader;
import io.nftproxy.netlink.nft.Data;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.NftKernel;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.SetElement;
import io.nftproxy.netlink.nft.Verdict;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Lookup;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.render.MaglevPick;
import io.nftproxy.proxy.render.MapKeys;
import io.nftproxy.proxy.render.Names;
import io.nftproxy.proxy.render.NftRenderer;
import io.nftproxy.proxy.sync.Generation;

/**
 * What the kernel does for one service, read from our tables alone ({@code nftproxy dump
 * --service NAMESPACE/NAME}): its frontends, found by the comment every element of a service
 * port carries, and per frontend what our sets and maps say of it: the endpoint count (its
 * membership in the tree's bit sets) and the endpoints by index (the tree's map for that count),
 * external traffic policy Local and this node's endpoints, ClientIP affinity and its timeout,
 * masquerading, source ranges, or why it is rejected or dropped; with --service-counters the new
 * connections counted per frontend, with --endpoint-counters per endpoint (in parentheses). No source, no API server: what
 * the kernel holds is what is shown.
 */
public final class KernelServiceView {
    /** One frontend: where it listens, for which service port, and what the kernel does with a new connection to it. */
    public record Frontend(IpFamily family, String port, InetAddress address, Protocol protocol, int number, String kind,
                           List<String> facts) {
        /** "10.96.0.10 tcp 80" or "NodePort tcp 30080". */
        public String where() {
            String a = address == null ? "NodePort" : family == IpFamily.V6 ? "[" + Inet.format(address) + "]" : Inet.format(address);
            return a + " " + (protocol == null ? "proto ?" : protocol.lower()) + " " + number;
        }
    }

    private final NftKernel kernel;
    private final CounterReader counters;
    private final String table;

    /** Reads table {@code table} through {@code kernel}, and the counters of its elements through {@code counters}. */
    public KernelServiceView(NftKernel kernel, CounterReader counters, String table) {
        this.kernel = kernel;
        this.counters = counters;
        this.table = table;
    }

    /** The frontends of service {@code service} ("namespace/name") in both families' tables; empty when none names it. */
    public List<Frontend> of(String service) throws NftException {
        List<Frontend> out = new ArrayList<>();
        for (IpFamily f : IpFamily.values()) {
            if (kernel.hasTable(f.nft(), table)) {
                out.addAll(new FamilyReader(f).frontends(service));
            }
        }
        return out;
    }

    /** One family's table, each set read at most once, in the generation of names it is in. */
    private final class FamilyReader {
        private final IpFamily f;
        private final Generation g;
        private final Set<String> sets = new HashSet<>();
        /** The sets declared with a counter in every element (--service-counters, --endpoint-counters). */
        private final Set<String> counted = new HashSet<>();
        /** Per set read (by its kernel name), its elements by key, in the order the kernel listed them. */
        private final Map<String, Map<Bytes, SetElement>> read = new HashMap<>();
        private final Map<String, Map<Bytes, CountedElement>> counts = new HashMap<>();

        FamilyReader(IpFamily f) throws NftException {
            this.f = f;
            for (NftSet s : kernel.listSets(f.nft(), table)) {
                sets.add(s.name());
                if (s.counter()) {
                    counted.add(s.name());
                }
            }
            this.g = sets.contains(Generation.SECOND.set(SERVICE_IPS)) && !sets.contains(SERVICE_IPS) ? Generation.SECOND
                    : Generation.FIRST;
        }

        /** The elements of one of our sets (by the renderer's name), read once; none when it is not there. */
        private Collection<SetElement> elements(String set) throws NftException {
            return read(g.set(set)).values();
        }

        private SetElement find(String set, Bytes key) throws NftException {
            return read(g.set(set)).get(key);
        }

        /** The elements of a set by its kernel name, by key (an interval set's ranges by their start), read once. */
        private Map<Bytes, SetElement> read(String kernelName) throws NftException {
            Map<Bytes, SetElement> els = read.get(kernelName);
            if (els == null) {
                els = new LinkedHashMap<>();
                if (sets.contains(kernelName)) {
                    for (SetElement e : kernel.listElements(f.nft(), table, kernelName)) {
                        if (!e.isIntervalEnd()) {
                            els.putIfAbsent(e.key(), e);
                        }
                    }
                }
                read.put(kernelName, els);
            }
            return els;
        }

        private boolean in(String set, Bytes key) throws NftException {
            return find(set, key) != null;
        }

        /** The counter of {@code key}'s element in {@code set}, or null when the set counts nothing. */
        private CountedElement counter(String set, Bytes key) throws NftException {
            String name = g.set(set);
            if (!counted.contains(name)) {
                return null;
            }
            Map<Bytes, CountedElement> byKey = counts.get(name);
            if (byKey == null) {
                byKey = new HashMap<>();
                for (CountedElement c : counters.countedElements(f.nft(), table, name)) {
                    byKey.put(c.key(), c);
                }
                counts.put(name, byKey);
            }
            return byKey.get(key);
        }

        /** ", N new connections counted" when the element of {@code key} in {@code set} counts. */
        private String counted(String set, Bytes key, String what) throws NftException {
            CountedElement c = counter(set, key);
            return c == null ? "" : "; " + c.packets() + " " + what;
        }

        List<Frontend> frontends(String service) throws NftException {
            // Key to the service port's name, from the comments of the sets a frontend is reached through.
            Map<Bytes, String> mine = new LinkedHashMap<>();
            for (String set : Stream.concat(IP_FRONTEND_SETS.stream(), NODEPORT_FRONTEND_SETS.stream()).toList()) {
                for (SetElement e : elements(set)) {
                    String c = e.comment();
                    if (c != null && Names.commentedService(c).equals(service)) {
                        mine.putIfAbsent(e.key(), Names.commentedPort(c));
                    }
                }
            }
            List<Frontend> out = new ArrayList<>();
            for (Map.Entry<Bytes, String> e : mine.entrySet()) {
                out.add(frontend(e.getKey(), e.getValue()));
            }
            return out;
        }

        private Frontend frontend(Bytes key, String port) throws NftException {
            MapKeys.Frontend fe = MapKeys.decodeFrontend(key);
            boolean ip = fe.address() != null;
            List<String> facts = new ArrayList<>();
            String kind = !ip ? "NodePort" : in(CLUSTER_IP_PORTS, key) ? "ClusterIP" : "external or load-balancer IP";
            boolean policyLocal = in(ip ? LOCAL_IPS : LOCAL_NODEPORTS, key);
            SetElement own = find(ip ? SERVICE_CHAINS : NODEPORT_CHAINS, key);
            // A verdict to a tree's block: a port past the blocks the tree's root asks for (one of
            // policy Local has it too, for connections crossing a flip of the policy, and picks below).
            int bigBlock = own != null && own.data() instanceof Verdict v
                    ? Names.tree(ip, false).blockOfRoot(Generation.original(v.chain())) : -1;
            if (bigBlock > 0 && !policyLocal) {
                facts.add(picked(key, ip, false, "endpoints", bigBlock)
                        + counted(ip ? SERVICE_CHAINS : NODEPORT_CHAINS, key, "new connections counted"));
            }
            // The set holds every frontend services sends on: the plain ones are the rest.
            if (in(ip ? SERVICE_IPS : SERVICE_NODEPORTS, key) && !policyLocal && own == null) {
                facts.add(picked(key, ip, false, "endpoints") + counted(ip ? SERVICE_IPS : SERVICE_NODEPORTS, key, "new connections counted"));
            }
            if (policyLocal) {
                facts.add("externalTrafficPolicy Local: from outside, " + picked(key, ip, true, "endpoints on this node")
                        + counted(ip ? LOCAL_IPS : LOCAL_NODEPORTS, key, "new connections counted"));
                SetElement toBlock = find(ip ? TableNames.IP_EXTERNAL_LOCAL_BLOCKS : TableNames.NODEPORT_EXTERNAL_LOCAL_BLOCKS, key);
                int block = toBlock != null && toBlock.data() instanceof Verdict v
                        ? Names.tree(ip, false).blockOfRoot(Generation.original(v.chain())) : -1;
                facts.add("from this node and its pods, " + picked(key, ip, false, "endpoints", Math.max(block, 0)));
                if (in(ip ? NO_LOCAL_ENDPOINT : NODEPORT_NO_LOCAL_ENDPOINT, key)) {
                    facts.add("no endpoint on this node: traffic from outside is dropped");
                }
            }
            MaglevPick.HashedChain hashed = own != null && own.data() instanceof Verdict v ? MaglevPick.ofChain(
                    Generation.original(v.chain())) : null;
            if (hashed != null) {
                facts.add(hashedPick(key, hashed) + counted(ip ? SERVICE_CHAINS : NODEPORT_CHAINS, key, "new connections counted"));
            } else if (bigBlock < 0 && own != null && own.data() instanceof Verdict v) {
                facts.add("chains of its own: " + v.kind().name().toLowerCase() + " " + Generation.original(v.chain()));
            }
            if (in(ip ? NO_ENDPOINT_REJECT : NODEPORT_NO_ENDPOINT_REJECT, key)) {
                facts.add("rejected: the service port has no endpoints"
                        + counted(ip ? NO_ENDPOINT_REJECT : NODEPORT_NO_ENDPOINT_REJECT, key, "connections rejected"));
            }
            if (in(ip ? NO_ENDPOINT_DROP : NODEPORT_NO_ENDPOINT_DROP, key)) {
                facts.add("dropped: none of its endpoints can be used here"
                        + counted(ip ? NO_ENDPOINT_DROP : NODEPORT_NO_ENDPOINT_DROP, key, "connections dropped"));
            }
            for (boolean local : new boolean[] {false, true}) {
                long seconds = stickySeconds(key, Names.tree(ip, local));
                if (seconds > 0) {
                    facts.add("ClientIP affinity" + (local ? " (this node's endpoints)" : "") + ": " + seconds + " s");
                }
            }
            if (in(ip ? EXTERNAL_MASQ : NODEPORT_MASQ, key)) {
                facts.add("masqueraded (the source is SNATed)");
            } else if (ip && kind.equals("ClusterIP") && clusterIpsMasqueraded()) {
                facts.add("masqueraded when the source is not local (or always, with masqueradeAll)");
            }
            if (ip && in(FIREWALL_IPS, key)) {
                facts.add("loadBalancerSourceRanges: " + String.join(", ", ranges(key, fe.address())));
            }
            return new Frontend(f, port, fe.address(), Protocol.ofNumber(fe.proto()), fe.port(), kind, facts);
        }

        /** Whether {@code services} masquerades ClusterIP ports at all (a rule looking up cluster-ip-ports: --cluster-cidr or masqueradeAll). */
        private boolean clusterIpsMasqueraded() throws NftException {
            if (clusterIpRule == null) {
                clusterIpRule = false;
                for (Rule r : kernel.listRules(f.nft(), table, g.chain(TableNames.SERVICES))) {
                    for (Expr x : r.exprs()) {
                        if (x instanceof Lookup l && Generation.original(l.set()).equals(CLUSTER_IP_PORTS)) {
                            clusterIpRule = true;
                        }
                    }
                }
            }
            return clusterIpRule;
        }

        private Boolean clusterIpRule;

        /**
         * "lb-algorithm maglev: k endpoints over a table of M slots: address:port n slots, …" from
         * the frontend's elements of the table's map, endpoints by their number of slots.
         */
        private String hashedPick(Bytes key, MaglevPick.HashedChain hashed) throws NftException {
            // Asked by key: the map holds every hashed frontend's slots (1.7 million at 1,000 services).
            List<Bytes> keys = new ArrayList<>(hashed.size());
            for (int i = 0; i < hashed.size(); i++) {
                keys.add(Bytes.concat(key, Bytes.host32(i)));
            }
            Map<String, Integer> slots = new TreeMap<>();
            if (sets.contains(g.set(hashed.slotsMap()))) {
                for (CountedElement e : counters.countedElements(f.nft(), table, g.set(hashed.slotsMap()), keys)) {
                    slots.merge(endpoint(e.data()), 1, Integer::sum);
                }
            }
            StringBuilder out = new StringBuilder("lb-algorithm " + hashed.algorithm() + ": " + slots.size()
                    + (slots.size() == 1 ? " endpoint" : " endpoints") + " over a table of " + hashed.size() + " slots:");
            slots.forEach((ep, n) -> out.append(out.charAt(out.length() - 1) == ':' ? " " : ", ").append(ep).append(' ')
                    .append(n).append(" slots"));
            return out.toString();
        }

        /** "k endpoints: 0 address:port, 1 …" from the tree's bit sets and its map for k. */
        private String picked(Bytes key, boolean ip, boolean local, String what) throws NftException {
            return picked(key, ip, local, what, 0);
        }

        /** As above, for a frontend a verdict element sends to block {@code bigBlock}'s tree (0: none). */
        private String picked(Bytes key, boolean ip, boolean local, String what, int bigBlock) throws NftException {
            Names.Tree tree = Names.tree(ip, local);
            int k = 1 + bigBlock * NftRenderer.MAX_SHARED_PICK;
            for (int bit = 0; bit < Names.Tree.bits(); bit++) {
                if (in(tree.countBit(bit), key)) {
                    k += 1 << bit;
                }
            }
            for (int block = 1; block < Names.Tree.blocks(); block++) {
                if (in(tree.countBlock(block), key)) {
                    k += block * NftRenderer.MAX_SHARED_PICK;
                }
            }
            // "frontend . index" for the indices 0 … k − 1, each looked up by its key.
            Map<Integer, String> byIndex = new TreeMap<>();
            for (int i = 0; i < k; i++) {
                Bytes indexed = Bytes.concat(key, Bytes.host32(i));
                SetElement e = find(tree.endpointMap(k), indexed);
                if (e != null) {
                    CountedElement c = counter(tree.endpointMap(k), indexed);
                    byIndex.put(i, endpoint(e.data()) + (c == null ? "" : " (" + c.packets() + ")"));
                }
            }
            StringBuilder out = new StringBuilder(k + " " + (k == 1 ? what.replaceFirst("^endpoints", "endpoint") : what) + ":");
            byIndex.forEach((i, ep) -> out.append(i == byIndex.keySet().iterator().next() ? " " : ", ").append(i).append(' ').append(ep));
            if (byIndex.size() != k) {
                out.append(" (").append(byIndex.size()).append(" of them in ").append(g.set(tree.endpointMap(k))).append(")");
            }
            return out.toString();
        }

        private long stickySeconds(Bytes key, Names.Tree tree) throws NftException {
            for (String s : sets) {
                String name = Generation.original(s);
                long seconds = tree.stickyTimeout(name);
                if (seconds > 0 && g.set(name).equals(s) && read(s).containsKey(key)) {
                    return seconds;
                }
            }
            return 0;
        }

        /** The source ranges a load-balancer IP port lets in: "first-last" per range of its shard's interval set. */
        private List<String> ranges(Bytes key, InetAddress lbIP) throws NftException {
            List<String> out = new ArrayList<>();
            for (SetElement e : elements(firewallAllow(TableNames.firewallShard(lbIP)))) {
                if (e.key().length() <= key.length() || !e.key().slice(0, key.length()).equals(key)) {
                    continue;
                }
                Bytes first = e.key().slice(key.length(), key.length() + f.addressBytes());
                Bytes last = e.keyEnd() == null ? first : e.keyEnd().slice(key.length(), key.length() + f.addressBytes());
                out.add(range(first, last));
            }
            return out;
        }

        /** A range of addresses as a CIDR when it is one ("192.0.2.0/24"), else "first-last". */
        private String range(Bytes first, Bytes last) {
            BigInteger a = new BigInteger(1, first.toArray());
            BigInteger b = new BigInteger(1, last.toArray());
            int bits = f.addressBytes() * 8;
            for (int prefix = 0; prefix <= bits; prefix++) {
                BigInteger host = BigInteger.ONE.shiftLeft(bits - prefix).subtract(BigInteger.ONE);
                if (a.and(host).signum() == 0 && a.or(host).equals(b)) {
                    return address(first) + (prefix == bits ? "" : "/" + prefix);
                }
            }
            return address(first) + "-" + address(last);
        }

        private String address(Bytes b) {
            try {
                return Inet.format(InetAddress.getByAddress(b.slice(0, f.addressBytes()).toArray()));
            } catch (UnknownHostException e) {
                return b.toString();
            }
        }

        /** "address:port" ("[address]:port" for IPv6) of a map's data "address . port". */
        private String endpoint(Data data) {
            String text = data instanceof Data.Value v ? MapKeys.endpointText(v.bytes(), f.addressBytes()) : null;
            return text != null ? text : String.valueOf(data);
        }
    }
}
