package io.nftproxy.sandbox;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Three nodes on one segment, the smallest network in which a service proxy's cross-node
 * behaviour shows (masquerading, traffic policies, where an endpoint lives):
 * <pre>
 *   ext 192.168.60.10 ---+--- node-a 192.168.60.2   pods 10.244.1.0/24 (gateway 10.244.1.1)
 *        (bridge in ns   +--- node-b 192.168.60.3   pods 10.244.2.0/24
 *         "lan")         +--- node-c 192.168.60.4   pods 10.244.3.0/24
 * </pre>
 * As a host-gateway network plugin does it, each node routes the other nodes' pod CIDRs to them
 * and each pod hangs off its node by a veth. The external client reaches load-balancer
 * addresses (203.0.113.0/24) through node-a, and is the nodes' default gateway. IPv4 only.
 */
public final class Cluster implements AutoCloseable {
    public static final List<String> NODES = List.of("node-a", "node-b", "node-c");
    public static final String EXT_IP = "192.168.60.10";

    public final List<Netns> nodes = new ArrayList<>();
    public final Netns ext;
    private final Netns lan;
    private final String prefix;
    private final String id = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xfffffL);
    private final List<Netns> pods = new ArrayList<>();
    private final Map<String, Netns> podByIp = new HashMap<>();
    private final List<AutoCloseable> servers = new ArrayList<>();

    /** node-a, node-b, node-c: 192.168.60.2, .3, .4. */
    public static String nodeIp(int node) {
        return "192.168.60." + (node + 2);
    }

    /** The pod CIDR of a node: 10.244.1.0/24 for node-a. */
    public static String podCidr(int node) {
        return "10.244." + (node + 1) + ".0/24";
    }

    private static String gateway(int node) {
        return "10.244." + (node + 1) + ".1";
    }

    public Cluster(String prefix) {
        this.prefix = prefix;
        lan = Netns.create(prefix + "-lan");
        Netns e = null;
        try {
            lan.exec("ip", "link", "add", "br" + id, "type", "bridge");
            lan.exec("ip", "link", "set", "br" + id, "up");
            for (int i = 0; i < NODES.size(); i++) {
                Netns n = Netns.create(prefix + "-" + NODES.get(i));
                nodes.add(n);
                n.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
                n.exec("sysctl", "-qw", "net.ipv4.conf.all.send_redirects=0");
                n.exec("sysctl", "-qw", "net.ipv4.conf.default.send_redirects=0");
                attach(n, "eth" + i, nodeIp(i));
            }
            e = Netns.create(prefix + "-ext");
            attach(e, "ext", EXT_IP);
            e.exec("ip", "route", "add", "203.0.113.0/24", "via", nodeIp(0));
            e.exec("ip", "route", "add", "10.96.0.0/16", "via", nodeIp(0));
            for (int i = 0; i < NODES.size(); i++) {
                Netns n = nodes.get(i);
                for (int j = 0; j < NODES.size(); j++) {
                    if (j != i) {
                        n.exec("ip", "route", "add", podCidr(j), "via", nodeIp(j));
                    }
                }
                // ClusterIPs are local nowhere: each node routes them out like any other address.
                n.exec("ip", "route", "add", "10.96.0.0/16", "dev", "eth" + i);
                // The outside world is behind the external client, as a node's default gateway: a
                // packet no rule takes is forwarded (where a proxy's filter rules may drop it), not
                // answered "no route" by the node's routing before any filter sees it.
                n.exec("ip", "route", "add", "default", "via", EXT_IP);
            }
        } catch (RuntimeException ex) {
            ext = e;
            close();
            throw ex;
        }
        ext = e;
    }

    /** A veth from the segment's bridge into {@code ns}, named {@code dev} there, with {@code ip}/24. */
    private void attach(Netns ns, String dev, String ip) {
        String lanIf = "l" + id + dev;
        Netns.run(List.of("ip", "link", "add", lanIf, "netns", lan.name(), "type", "veth", "peer", "name", dev,
                "netns", ns.name()), null);
        lan.exec("ip", "link", "set", lanIf, "master", "br" + id);
        lan.exec("ip", "link", "set", lanIf, "up");
        ns.exec("ip", "link", "set", dev, "up");
        ns.exec("ip", "addr", "add", ip + "/24", "dev", dev);
    }

    /** A pod on node {@code node} (0 for node-a) with one address from its pod CIDR. */
    public Netns pod(int node, String ip) {
        Netns p = Netns.create(prefix + "-pod");
        pods.add(p);
        Netns n = nodes.get(node);
        String nodeIf = "v" + id + "x" + pods.size();
        Sandbox.link(n, nodeIf, p, "eth0");
        n.exec("ip", "addr", "add", gateway(node) + "/32", "dev", nodeIf);
        n.exec("ip", "route", "add", ip, "dev", nodeIf);
        p.exec("ip", "addr", "add", ip + "/32", "dev", "eth0");
        p.exec("ip", "route", "add", "default", "via", gateway(node), "dev", "eth0", "onlink");
        podByIp.put(ip, p);
        return p;
    }

    /** The pod namespace holding {@code ip}. */
    public Netns podOf(String ip) {
        Netns p = podByIp.get(ip);
        if (p == null) {
            throw new IllegalArgumentException("no pod " + ip);
        }
        return p;
    }

    /** A pod on {@code node} that answers on ip:port (TCP and UDP) with "ip:port peer". */
    public void serve(int node, String ip, int port) throws Exception {
        Netns p = podByIp.containsKey(ip) ? podByIp.get(ip) : pod(node, ip);
        servers.addAll(Sandbox.answer(p.ns(), ip, port));
    }

    @Override
    public void close() {
        Sandbox.stop(servers);
        pods.forEach(Netns::close);
        nodes.forEach(Netns::close);
        if (ext != null) {
            ext.close();
        }
        lan.close();
    }
}
