package io.nftproxy.proxy.kernel;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.nftproxy.sandbox.Netns;
import io.nftproxy.sandbox.Sandbox;

/**
 * Clients that connect to one address without pause, one thread each, until closed: each from
 * its own source address and range of source ports, taken in turn and never twice. A port given
 * again may meet its server's TIME_WAIT of an earlier connection, whose answer to the SYN makes
 * TCP send it again a second later: never twice, a SYN sent again (TcpExt TCPSynRetrans, {@link
 * #synRetransmits}) is a connection the rules lost once.
 */
final class ConnectingClients implements AutoCloseable {
    /** One client: its source address and the source ports it takes in turn, from {@code first} below {@code end}. */
    record Client(String source, int first, int end) {
    }

    /** A connection made: by which client, when it began and ended (nanoTime), and how it went (null: it threw {@code error}). */
    record Connection(Client client, long began, long ended, Sandbox.Outcome outcome, Exception error) {
    }

    private final AtomicBoolean stop = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();

    /** Starts the clients, each calling {@code made} with every connection it made. */
    ConnectingClients(Sandbox sandbox, Netns from, List<Client> clients, String dst, int port, Consumer<Connection> made) {
        for (Client c : clients) {
            Thread t = new Thread(() -> {
                for (int p = c.first(); !stop.get() && p < c.end(); p++) {
                    long began = System.nanoTime();
                    try {
                        Sandbox.Outcome o = sandbox.tcp(from, c.source(), p, dst, port);
                        made.accept(new Connection(c, began, System.nanoTime(), o, null));
                    } catch (Exception e) {
                        made.accept(new Connection(c, began, System.nanoTime(), null, e));
                    }
                }
            }, "client-" + c.source() + "-" + c.first());
            t.start();
            threads.add(t);
        }
    }

    /** Stops the clients once their current connection is done. */
    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
    }

    /** The SYNs a namespace's TCP sent again (TcpExt TCPSynRetrans in its /proc/net/netstat). */
    static long synRetransmits(Netns ns) {
        List<String> lines = ns.exec("cat", "/proc/net/netstat").lines().filter(l -> l.startsWith("TcpExt:")).toList();
        List<String> names = List.of(lines.get(0).split("\\s+"));
        return Long.parseLong(lines.get(1).split("\\s+")[names.indexOf("TCPSynRetrans")]);
    }
}
