package io.nftproxy.sandbox;

import java.net.ConnectException;
import java.net.DatagramPacket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.PortUnreachableException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/** Connections from inside a namespace to the servers {@link Sandbox#answer} starts: who answered, and the peer it saw. */
public final class Clients {
    private Clients() {
    }

    /** Connects over TCP from namespace {@code from} (source {@code src}, or the routing's choice). */
    public static Sandbox.Outcome tcp(Netns from, String src, String dst, int port) throws Exception {
        return tcp(from, src, 0, dst, port);
    }

    /**
     * Connects over TCP from source port {@code srcPort} (0: the kernel's choice). A caller that
     * never gives the same addresses and ports twice never meets a server's TIME_WAIT of an
     * earlier connection, which may answer a new SYN with an ACK and make TCP retry it a second
     * later; a source port may be given again to connect elsewhere.
     */
    public static Sandbox.Outcome tcp(Netns from, String src, int srcPort, String dst, int port) throws Exception {
        return from.ns().call(() -> {
            try (SocketChannel c = SocketChannel.open()) {
                if (src != null) {
                    // A source port used before may still be in TIME_WAIT (the client's close may
                    // cross the server's): bound again, to connect elsewhere.
                    c.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                    c.bind(new InetSocketAddress(InetAddress.getByName(src), srcPort));
                }
                c.socket().connect(new InetSocketAddress(InetAddress.getByName(dst), port), 1500);
                c.socket().setSoTimeout(2000);
                byte[] buf = new byte[256];
                int n = c.socket().getInputStream().read(buf);
                if (n <= 0) {
                    return Sandbox.Outcome.refused();
                }
                String[] parts = new String(buf, 0, n, StandardCharsets.UTF_8).trim().split(" ");
                return new Sandbox.Outcome(parts[0], parts[1], Sandbox.Outcome.Result.ANSWERED);
            } catch (ConnectException e) {
                return Sandbox.Outcome.refused();
            } catch (SocketTimeoutException e) {
                return Sandbox.Outcome.timeout();
            } catch (SocketException e) {
                // ICMP network or host unreachable: nobody routes that address
                return new Sandbox.Outcome(null, null, Sandbox.Outcome.Result.UNREACHABLE);
            }
        });
    }

    /** One UDP request from a fixed source port (one conntrack flow across calls). */
    public static Sandbox.Outcome udp(Netns from, String src, int srcPort, String dst, int port) throws Exception {
        return from.ns().call(() -> {
            InetAddress d = InetAddress.getByName(dst);
            try (DatagramChannel c = DatagramChannel.open(dst.contains(":") ? StandardProtocolFamily.INET6
                    : StandardProtocolFamily.INET)) {
                if (src != null) {
                    c.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                    c.bind(new InetSocketAddress(InetAddress.getByName(src), srcPort));
                }
                c.connect(new InetSocketAddress(d, port));
                c.socket().setSoTimeout(1500);
                c.write(ByteBuffer.wrap("hello".getBytes(StandardCharsets.UTF_8)));
                DatagramPacket p = new DatagramPacket(new byte[256], 256);
                c.socket().receive(p);
                String[] parts = new String(p.getData(), 0, p.getLength(), StandardCharsets.UTF_8).trim().split(" ");
                return new Sandbox.Outcome(parts[0], parts[1], Sandbox.Outcome.Result.ANSWERED);
            } catch (PortUnreachableException e) {
                return Sandbox.Outcome.refused();
            } catch (SocketTimeoutException e) {
                return Sandbox.Outcome.timeout();
            }
        });
    }
}
