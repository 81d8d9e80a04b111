package io.nftproxy.sandbox;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;

import io.nftproxy.ffi.NetNamespace;

/**
 * A small network of namespaces around one node, wired as a CNI wires pods:
 * <pre>
 *   ext (192.168.50.10, fd00:50::10) ---- node (192.168.50.2, fd00:50::2) ---- pod namespaces, one veth each
 *                                          gateway 10.244.0.1 / fd00:244::1    (10.244.x.y/32, fd00:244::x/128)
 * </pre>
 * Each pod answers on its endpoint ports with the address it was reached on and the peer it saw.
 * Clients connect from any namespace with a chosen source address.
 */
public class Sandbox implements AutoCloseable {
    public static final String NODE_IP = "192.168.50.2";
    public static final String NODE_IP6 = "fd00:50::2";
    public static final String EXT_IP = "192.168.50.10";
    public static final String EXT_IP6 = "fd00:50::10";
    public static final String NODE_POD_GW = "10.244.0.1";
    public static final String NODE_POD_GW6 = "fd00:244::1";

    public final Netns node;
    public final Netns ext;
    private final String prefix;
    private final String id;
    private int pods;
    /** The bridge pods attach to, when {@link #bridgePods} was called; else each pod has its own link. */
    private String bridge;
    private final Map<String, Netns> podByIp = new HashMap<>();
    private final List<Netns> podNamespaces = new ArrayList<>();
    private final List<AutoCloseable> servers = new ArrayList<>();

    /** What a connection attempt ended in. */
    public record Outcome(String answeredBy, String peerSeen, Result result) {
        public enum Result { ANSWERED, REFUSED, TIMEOUT, UNREACHABLE }

        static Outcome refused() {
            return new Outcome(null, null, Result.REFUSED);
        }

        static Outcome timeout() {
            return new Outcome(null, null, Result.TIMEOUT);
        }

        @Override
        public String toString() {
            return result == Result.ANSWERED ? answeredBy + " (saw " + peerSeen + ")" : result.toString();
        }
    }

    /** Builds the node and the external network; namespaces are named after {@code prefix}. */
    public Sandbox(String prefix) {
        this.prefix = prefix;
        id = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xfffffL);
        node = Netns.create(prefix + "-node");
        ext = Netns.create(prefix + "-ext");
        try {
            // No ICMP redirects from the node: they would spend the per-host ICMP budget that the
            // port-unreachable answers of REJECT need (ClusterIPs are routed back out to "ext").
            node.exec("sysctl", "-qw", "net.ipv4.conf.all.send_redirects=0");
            node.exec("sysctl", "-qw", "net.ipv4.conf.default.send_redirects=0");
            noDad(node);
            noDad(ext);
            link(node, "ne" + id, ext, "en" + id);
            node.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
            node.exec("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1");
            addr(node, "ne" + id, NODE_IP + "/24");
            addr(node, "ne" + id, NODE_IP6 + "/64");
            addr(ext, "en" + id, EXT_IP + "/24");
            addr(ext, "en" + id, EXT_IP6 + "/64");
            // Service and load-balancer addresses are reached through the node.
            ext.exec("ip", "route", "add", "10.96.0.0/16", "via", NODE_IP);
            ext.exec("ip", "route", "add", "203.0.113.0/24", "via", NODE_IP);
            ext.exec("ip", "-6", "route", "add", "fd00:96::/64", "via", NODE_IP6);
            ext.exec("ip", "-6", "route", "add", "2001:db8::/64", "via", NODE_IP6);
            // ClusterIPs are local nowhere: the node routes them like any other address.
            node.exec("ip", "route", "add", "10.96.0.0/16", "dev", "ne" + id);
            // Load-balancer IPs are routable too (their traffic is forwarded when no rule takes it).
            node.exec("ip", "route", "add", "203.0.113.0/24", "dev", "ne" + id);
            node.exec("ip", "-6", "route", "add", "fd00:96::/64", "dev", "ne" + id);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * No duplicate address detection on interfaces created from now on: their link-local
     * addresses would otherwise stay tentative for a second, and neighbour discovery with them.
     */
    static void noDad(Netns ns) {
        ns.exec("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0");
        ns.exec("sysctl", "-qw", "net.ipv6.conf.default.accept_dad=0");
    }

    static void link(Netns a, String aIf, Netns b, String bIf) {
        Netns.run(List.of("ip", "link", "add", aIf, "netns", a.name(), "type", "veth", "peer", "name", bIf,
                "netns", b.name()), null);
        a.exec("ip", "link", "set", aIf, "up");
        b.exec("ip", "link", "set", bIf, "up");
    }

    static void addr(Netns ns, String dev, String cidr) {
        if (cidr.contains(":")) {
            ns.exec("ip", "addr", "add", cidr, "dev", dev, "nodad");
        } else {
            ns.exec("ip", "addr", "add", cidr, "dev", dev);
        }
    }

    /**
     * Attaches the pods created after this to one bridge on the node, as bridge-based network
     * plugins do (the node's gateway address moves to the bridge). Pod traffic then enters the
     * node's IP layer through the bridge.
     */
    public void bridgePods(String name) {
        node.exec("ip", "link", "add", name, "type", "bridge");
        node.exec("ip", "link", "set", name, "up");
        node.exec("ip", "addr", "add", NODE_POD_GW + "/32", "dev", name);
        node.exec("ip", "addr", "add", NODE_POD_GW6 + "/128", "dev", name, "nodad");
        bridge = name;
    }

    /**
     * A pod: its own namespace with these addresses, a veth to the node (or to the node's pod
     * bridge), a /32 (/128) route on the node and a default route to the node's gateway address.
     */
    public Netns pod(String... ips) {
        Netns p = Netns.create(prefix + "-pod");
        podNamespaces.add(p);
        String nodeIf = "v" + id + "n" + pods;
        String podIf = "v" + id + "p" + pods;
        pods++;
        noDad(p);
        link(node, nodeIf, p, podIf);
        if (bridge != null) {
            node.exec("ip", "link", "set", nodeIf, "master", bridge);
        } else {
            node.exec("ip", "addr", "add", NODE_POD_GW + "/32", "dev", nodeIf);
            node.exec("ip", "addr", "add", NODE_POD_GW6 + "/128", "dev", nodeIf, "nodad");
        }
        String routeDev = bridge != null ? bridge : nodeIf;
        boolean v4 = false;
        boolean v6 = false;
        for (String ip : ips) {
            boolean six = ip.contains(":");
            addr(p, podIf, ip + (six ? "/128" : "/32"));
            node.exec("ip", six ? "-6" : "-4", "route", "add", ip, "dev", routeDev);
            podByIp.put(ip, p);
            v4 |= !six;
            v6 |= six;
        }
        if (v4) {
            p.exec("ip", "route", "add", "default", "via", NODE_POD_GW, "dev", podIf, "onlink");
        }
        if (v6) {
            p.exec("ip", "-6", "route", "add", "default", "via", NODE_POD_GW6, "dev", podIf, "onlink");
        }
        return p;
    }

    /** The pod namespace holding {@code ip}, created as a one-address pod the first time. */
    public Netns podOf(String ip) {
        Netns p = podByIp.get(ip);
        return p != null ? p : pod(ip);
    }

    /** Adds an address to the node (a load-balancer VIP on the node, a second NodePort address). */
    public void nodeAddress(String cidr) {
        node.exec("ip", "addr", "add", cidr, "dev", "lo");
    }

    /** A TCP and a UDP server on ip:port in the pod network; each answers "ip:port peer". */
    public void serve(String ip, int port) throws Exception {
        servers.addAll(answer(podOf(ip).ns(), ip, port));
    }

    /** A TCP and a UDP server on ip:port in namespace {@code ns}, each answering "ip:port peer"; close them to stop. */
    public static List<AutoCloseable> answer(NetNamespace ns, String ip, int port) throws Exception {
        InetSocketAddress at = new InetSocketAddress(InetAddress.getByName(ip), port);
        String me = (ip.contains(":") ? "[" + ip + "]" : ip) + ":" + port;
        ServerSocketChannel tcp = ns.call(() -> {
            ServerSocketChannel s = ServerSocketChannel.open();
            s.bind(at, 128);
            return s;
        });
        DatagramChannel udp = ns.call(() -> {
            DatagramChannel d = DatagramChannel.open(ip.contains(":") ? StandardProtocolFamily.INET6
                    : StandardProtocolFamily.INET);
            d.bind(at);
            return d;
        });
        Thread t = new Thread(() -> {
            while (tcp.isOpen()) {
                try (SocketChannel c = tcp.accept()) {
                    InetSocketAddress peer = (InetSocketAddress) c.getRemoteAddress();
                    c.write(ByteBuffer.wrap((me + " " + peer.getAddress().getHostAddress() + "\n")
                            .getBytes(StandardCharsets.UTF_8)));
                } catch (IOException e) {
                    if (!tcp.isOpen()) {
                        return;
                    }
                }
            }
        }, "tcp-" + me);
        t.setDaemon(true);
        t.start();
        Thread u = new Thread(() -> {
            ByteBuffer b = ByteBuffer.allocate(512);
            while (udp.isOpen()) {
                try {
                    b.clear();
                    InetSocketAddress peer = (InetSocketAddress) udp.receive(b);
                    udp.send(ByteBuffer.wrap((me + " " + peer.getAddress().getHostAddress() + "\n")
                            .getBytes(StandardCharsets.UTF_8)), peer);
                } catch (IOException e) {
                    if (!udp.isOpen()) {
                        return;
                    }
                }
            }
        }, "udp-" + me);
        u.setDaemon(true);
        u.start();
        return List.of(tcp, udp);
    }

    /** Connects over TCP from namespace {@code from} (source {@code src}, or the routing's choice). */
    public Outcome tcp(Netns from, String src, String dst, int port) throws Exception {
        return Clients.tcp(from, src, dst, port);
    }

    /** Connects over TCP from a given source port (see {@link Clients#tcp(Netns, String, int, String, int)}). */
    public Outcome tcp(Netns from, String src, int srcPort, String dst, int port) throws Exception {
        return Clients.tcp(from, src, srcPort, dst, port);
    }

    /** One UDP request and its answer. */
    public Outcome udp(Netns from, String src, String dst, int port) throws Exception {
        return Clients.udp(from, src, 0, dst, port);
    }

    /** One UDP request from a fixed source port (one conntrack flow across calls). */
    public Outcome udp(Netns from, String src, int srcPort, String dst, int port) throws Exception {
        return Clients.udp(from, src, srcPort, dst, port);
    }

    /**
     * Waits until {@code check} holds, polling (a condition on the network, not on time). A check
     * that throws counts as "not yet" (a server not listening yet refuses the connection); the
     * last such exception is the cause when the time is up.
     */
    public static void eventually(Duration timeout, Callable<Boolean> check, String what) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try {
                if (check.call()) {
                    return;
                }
            } catch (Exception e) {
                last = e;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("not within " + timeout + ": " + what, last);
    }

    /** Stops servers started by {@link #answer}, each as well as it can. */
    static void stop(List<AutoCloseable> servers) {
        for (AutoCloseable s : servers) {
            try {
                s.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
    }

    @Override
    public void close() {
        stop(servers);
        for (Netns n : podNamespaces) {
            n.close();
        }
        for (Netns n : new Netns[] {ext, node}) {
            if (n != null) {
                n.close();
            }
        }
    }
}
