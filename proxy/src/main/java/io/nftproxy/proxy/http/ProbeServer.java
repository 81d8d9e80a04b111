package io.nftproxy.proxy.http;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small HTTP/1.x server for probes and scrapes, built to survive clients that misbehave. The
 * endpoints it serves are on the node's network (health on 0.0.0.0:10256, healthCheckNodePorts
 * reached by load balancers), and a stalled client must never cost a kubelet probe its answer:
 * <ul>
 * <li>one selector thread reads every request head without blocking; a slow or stalled client
 *     costs a buffer, not a thread, and is dropped when its request is not complete within the
 *     request timeout (and its answer not taken within the response timeout);</li>
 * <li>at the connection limit the oldest connection still sending its request is dropped, so a
 *     flood of stalled sockets cannot lock out a new client that sends its request at once;</li>
 * <li>handlers run on a small bounded pool; when it is full the answer is 503 at once;</li>
 * <li>every answer closes the connection (probes and scrapes open one per request anyway).</li>
 * </ul>
 */
public final class ProbeServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProbeServer.class);

    /** What a handler sees of a request. */
    public record Request(String method, String path, String query, Map<String, String> headers) {
        /** A header by its lower-case name, or null. */
        public String header(String lowerCaseName) {
            return headers.get(lowerCaseName);
        }
    }

    /** A complete answer; {@code headers} are extra ones. */
    public record Response(int status, String contentType, byte[] body, Map<String, String> headers) {
        public Response(int status, String contentType, byte[] body) {
            this(status, contentType, body, Map.of());
        }

        public static Response text(int status, String contentType, String body) {
            return new Response(status, contentType, body.getBytes(StandardCharsets.UTF_8));
        }

        public static Response json(int status, String body) {
            return text(status, "application/json", body);
        }

        public Response withHeader(String name, String value) {
            Map<String, String> h = new LinkedHashMap<>(headers);
            h.put(name, value);
            return new Response(status, contentType, body, h);
        }
    }

    @FunctionalInterface
    public interface Handler {
        Response handle(Request r) throws Exception;
    }

    /** The server's bounds. */
    public record Limits(int maxConnections, Duration requestTimeout, Duration responseTimeout, int maxHeadBytes,
                         int workers, int queue) {
        public static final Limits DEFAULT = new Limits(256, Duration.ofSeconds(5), Duration.ofSeconds(10), 8192, 2, 32);
    }

    private enum Phase { READING, HANDLING, WRITING }

    private static final class Conn {
        final SocketChannel ch;
        SelectionKey key;
        ByteBuffer in = ByteBuffer.allocate(512);
        ByteBuffer out;
        Phase phase = Phase.READING;
        long deadline;

        Conn(SocketChannel ch) {
            this.ch = ch;
        }
    }

    private final String name;
    private final ServerSocketChannel listener;
    private final Selector selector;
    private final Map<String, Handler> routes;
    private final Handler fallback;
    private final Limits limits;
    private final ThreadPoolExecutor workers;
    /** Connections in accept order: the oldest still reading is the one dropped at the limit. */
    private final LinkedHashSet<Conn> conns = new LinkedHashSet<>();
    /** Answers ready to write, handed from the workers to the selector thread. */
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean closed;

    /**
     * Serves {@code routes} (exact paths) on an already bound channel (bound in whatever network
     * namespace the caller chose); other paths go to {@code fallback}, or get 404 when it is null.
     */
    public ProbeServer(String name, ServerSocketChannel bound, Map<String, Handler> routes, Handler fallback, Limits limits)
            throws IOException {
        this.name = name;
        this.listener = bound;
        this.routes = Map.copyOf(routes);
        this.fallback = fallback;
        this.limits = limits;
        this.selector = Selector.open();
        listener.configureBlocking(false);
        listener.register(selector, SelectionKey.OP_ACCEPT);
        this.workers = new ThreadPoolExecutor(limits.workers(), limits.workers(), 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(limits.queue()), r -> {
                    Thread t = new Thread(r, name + "-handler");
                    t.setDaemon(true);
                    return t;
                }, new ThreadPoolExecutor.AbortPolicy());
        workers.allowCoreThreadTimeOut(true);
        this.thread = new Thread(this::loop, name + "-http");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Binds {@code at} in the caller's network namespace and serves. */
    public static ProbeServer bind(String name, InetSocketAddress at, Map<String, Handler> routes, Handler fallback)
            throws IOException {
        return new ProbeServer(name, open(at), routes, fallback, Limits.DEFAULT);
    }

    /** A listening channel with address reuse (a restarted proxy rebinds at once). */
    public static ServerSocketChannel open(InetSocketAddress at) throws IOException {
        ServerSocketChannel ch = ServerSocketChannel.open();
        try {
            ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            ch.bind(at, 128);
            return ch;
        } catch (IOException e) {
            ch.close();
            throw e;
        }
    }

    public int port() {
        try {
            return ((InetSocketAddress) listener.getLocalAddress()).getPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private void loop() {
        try {
            while (!closed) {
                selector.select(250);
                Runnable t;
                while ((t = tasks.poll()) != null) {
                    t.run();
                }
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey k = it.next();
                    it.remove();
                    if (!k.isValid()) {
                        continue;
                    }
                    if (k.isAcceptable()) {
                        accept();
                    } else {
                        Conn c = (Conn) k.attachment();
                        try {
                            if (k.isReadable()) {
                                read(c);
                            } else if (k.isWritable()) {
                                write(c);
                            }
                        } catch (IOException e) {
                            drop(c);
                        }
                    }
                }
                expire();
            }
        } catch (IOException | ClosedSelectorException e) {
            if (!closed) {
                LOG.error("{} HTTP server stopped: {}", name, e.getMessage());
            }
        } finally {
            for (Conn c : new ArrayList<>(conns)) {
                drop(c);
            }
        }
    }

    private void accept() throws IOException {
        SocketChannel ch;
        while ((ch = listener.accept()) != null) {
            if (conns.size() >= limits.maxConnections()) {
                Conn oldest = null;
                for (Conn c : conns) {
                    if (c.phase == Phase.READING) {
                        oldest = c;
                        break;
                    }
                }
                if (oldest == null) {
                    ch.close(); // every slot is being answered: this one waits for nothing
                    continue;
                }
                drop(oldest);
            }
            ch.configureBlocking(false);
            Conn c = new Conn(ch);
            c.deadline = System.nanoTime() + limits.requestTimeout().toNanos();
            c.key = ch.register(selector, SelectionKey.OP_READ, c);
            conns.add(c);
        }
    }

    private void read(Conn c) throws IOException {
        if (!c.in.hasRemaining()) {
            if (c.in.capacity() >= limits.maxHeadBytes()) {
                respond(c, Response.text(431, "text/plain; charset=utf-8", "request header fields too large\n"), false);
                return;
            }
            ByteBuffer bigger = ByteBuffer.allocate(Math.min(limits.maxHeadBytes(), c.in.capacity() * 2));
            c.in.flip();
            bigger.put(c.in);
            c.in = bigger;
        }
        int n = c.ch.read(c.in);
        if (n < 0) {
            drop(c);
            return;
        }
        int end = headEnd(c.in);
        if (end < 0) {
            return;
        }
        String head = new String(c.in.array(), 0, end, StandardCharsets.ISO_8859_1);
        c.in = null;
        Request req = parse(head);
        if (req == null) {
            respond(c, Response.text(400, "text/plain; charset=utf-8", "bad request\n"), false);
            return;
        }
        Handler h = routes.getOrDefault(req.path(), fallback);
        if (h == null) {
            respond(c, Response.text(404, "text/plain; charset=utf-8", "404 page not found\n"), false);
            return;
        }
        c.phase = Phase.HANDLING;
        c.key.interestOps(0);
        boolean head0 = req.method().equals("HEAD");
        try {
            workers.execute(() -> {
                Response r;
                try {
                    r = h.handle(req);
                } catch (Exception | Error e) {
                    LOG.warn("{} {} {}: {}", name, req.method(), req.path(), e.toString());
                    r = Response.text(500, "text/plain; charset=utf-8", "internal error\n");
                }
                Response answer = r;
                tasks.add(() -> respond(c, answer, head0));
                selector.wakeup();
            });
        } catch (RejectedExecutionException e) {
            respond(c, Response.text(503, "text/plain; charset=utf-8", "busy\n"), head0);
        }
    }

    /** The offset just past the blank line that ends the request head, or -1. */
    private static int headEnd(ByteBuffer b) {
        byte[] a = b.array();
        int len = b.position();
        for (int i = 0; i + 1 < len; i++) {
            if (a[i] == '\n' && (a[i + 1] == '\n' || (a[i + 1] == '\r' && i + 2 < len && a[i + 2] == '\n'))) {
                return i + (a[i + 1] == '\n' ? 2 : 3);
            }
        }
        return -1;
    }

    /** Request line and headers; null when malformed. Bodies are not read (none of our routes takes one). */
    static Request parse(String head) {
        String[] lines = head.split("\r?\n");
        String[] first = lines[0].split(" ");
        if (first.length != 3 || !first[2].startsWith("HTTP/1.") || first[0].isEmpty() || !first[1].startsWith("/")) {
            return null;
        }
        Map<String, String> headers = new HashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon <= 0) {
                if (!lines[i].isEmpty()) {
                    return null;
                }
                continue;
            }
            headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
        }
        String target = first[1];
        int q = target.indexOf('?');
        return new Request(first[0], q < 0 ? target : target.substring(0, q), q < 0 ? "" : target.substring(q + 1), headers);
    }

    private void respond(Conn c, Response r, boolean headOnly) {
        if (!c.ch.isOpen()) {
            return;
        }
        String reason = switch (r.status()) {
            case 200 -> "OK";
            case 400 -> "Bad Request";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 503 -> "Service Unavailable";
            default -> "Status";
        };
        StringBuilder h = new StringBuilder("HTTP/1.1 ").append(r.status()).append(' ').append(reason)
                .append("\r\nContent-Type: ").append(r.contentType()).append("\r\nContent-Length: ").append(r.body().length)
                .append("\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n");
        r.headers().forEach((k, v) -> h.append(k).append(": ").append(v).append("\r\n"));
        byte[] headBytes = h.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer out = ByteBuffer.allocate(headBytes.length + (headOnly ? 0 : r.body().length));
        out.put(headBytes);
        if (!headOnly) {
            out.put(r.body());
        }
        out.flip();
        c.out = out;
        c.phase = Phase.WRITING;
        c.deadline = System.nanoTime() + limits.responseTimeout().toNanos();
        try {
            write(c);
        } catch (IOException e) {
            drop(c);
        }
    }

    private void write(Conn c) throws IOException {
        c.ch.write(c.out);
        if (c.out.hasRemaining()) {
            c.key.interestOps(SelectionKey.OP_WRITE);
        } else {
            drop(c);
        }
    }

    private void expire() {
        long now = System.nanoTime();
        List<Conn> late = new ArrayList<>();
        for (Conn c : conns) {
            if (c.phase != Phase.HANDLING && now - c.deadline > 0) {
                late.add(c);
            }
        }
        late.forEach(this::drop);
    }

    private void drop(Conn c) {
        conns.remove(c);
        if (c.key != null) {
            c.key.cancel();
        }
        try {
            c.ch.close();
        } catch (IOException ignored) {
            // closing: nothing left to do with it
        }
    }

    /** Open connections (tests watch stalled ones go). */
    public int connections() {
        CompletableCount count = new CompletableCount();
        tasks.add(() -> count.complete(conns.size()));
        selector.wakeup();
        return count.await();
    }

    /** A tiny future for a count computed on the selector thread. */
    private static final class CompletableCount extends CompletableFuture<Integer> {
        int await() {
            try {
                return get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                return -1;
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        selector.wakeup();
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        workers.shutdownNow();
        try {
            listener.close();
            selector.close();
        } catch (IOException ignored) {
            // closing: nothing left to do with it
        }
    }
}
