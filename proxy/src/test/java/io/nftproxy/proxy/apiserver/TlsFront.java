package io.nftproxy.proxy.apiserver;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.testkit.TestNetns;

/**
 * The API server's address as a node sees it: TLS with a certificate the kubeconfig's CA file
 * names, in front of fabric8's mock API server (plain HTTP on loopback). It can go away (every
 * connection cut, the port refusing) and come back on the same port with the same certificate, as
 * a restarted API server does. It remembers the bearer tokens the clients presented.
 */
public final class TlsFront implements AutoCloseable {
    private static final String PASS = "changeit";
    private final SSLContext tls;
    private final int backendPort;
    private final int port;
    private final InetAddress bind;
    private final NetNamespace netns;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final Set<String> tokens = ConcurrentHashMap.newKeySet();
    private volatile ServerSocket listener;

    private TlsFront(SSLContext tls, InetAddress bind, NetNamespace netns, int port, int backendPort) {
        this.tls = tls;
        this.bind = bind;
        this.netns = netns;
        this.port = port;
        this.backendPort = backendPort;
    }

    /**
     * A front for {@code backendPort} on a free loopback port, not listening yet; its certificate
     * (for 127.0.0.1) goes to {@code dir}/ca.crt, which a kubeconfig names as its
     * certificate-authority.
     */
    public static TlsFront create(Path dir, int backendPort) throws Exception {
        return create(dir, backendPort, InetAddress.getLoopbackAddress(), null);
    }

    /**
     * The same on {@code bind}, in network namespace {@code netns} (null: ours): a control plane
     * on an address of its own that a node's namespace reaches over a link.
     */
    public static TlsFront create(Path dir, int backendPort, InetAddress bind, NetNamespace netns) throws Exception {
        Path ks = dir.resolve("apiserver.p12");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        TestNetns.run(List.of(keytool, "-genkeypair", "-alias", "apiserver", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=kube-apiserver", "-ext", "san=ip:" + bind.getHostAddress(), "-validity", "2", "-keystore", ks.toString(),
                "-storetype", "PKCS12", "-storepass", PASS, "-keypass", PASS), null);
        TestNetns.run(List.of(keytool, "-exportcert", "-rfc", "-alias", "apiserver", "-keystore", ks.toString(), "-storepass",
                PASS, "-file", dir.resolve("ca.crt").toString()), null);
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(ks.toFile())) {
            store.load(in, PASS.toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(store, PASS.toCharArray());
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort(); // free now, refused until up()
        }
        return new TlsFront(ctx, bind, netns, port, backendPort);
    }

    public String url() {
        return "https://" + bind.getHostAddress() + ":" + port;
    }

    /** Starts answering on the port. */
    public synchronized void up() throws IOException {
        // A socket made in a namespace stays there: the accept thread need not be.
        SSLServerSocket s = netns == null ? listen() : netns.call(this::listen);
        listener = s;
        Thread t = new Thread(() -> accept(s), "tls-front");
        t.setDaemon(true);
        t.start();
    }

    private SSLServerSocket listen() throws IOException {
        SSLServerSocket s = (SSLServerSocket) tls.getServerSocketFactory().createServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(bind, port));
        return s;
    }

    /** Goes away: the port refuses connections and every open one is cut. */
    public synchronized void down() throws IOException {
        if (listener != null) {
            listener.close();
            listener = null;
        }
        for (Socket s : open) {
            s.close();
        }
        open.clear();
    }

    /** The bearer tokens clients presented. */
    public Set<String> tokens() {
        return tokens;
    }

    private void accept(ServerSocket s) {
        while (!s.isClosed()) {
            try {
                Socket client = s.accept();
                Socket backend = new Socket(InetAddress.getLoopbackAddress(), backendPort);
                open.add(client);
                open.add(backend);
                pump(client, backend, true);
                pump(backend, client, false);
            } catch (IOException e) {
                // closed, or a client that failed its handshake: the next one is served
            }
        }
    }

    private void pump(Socket from, Socket to, boolean request) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buf)) > 0; ) {
                    if (request) {
                        remember(new String(buf, 0, n, StandardCharsets.ISO_8859_1));
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // one side went: close both below
            }
            try {
                from.close();
                to.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }, "tls-front-pump");
        t.setDaemon(true);
        t.start();
    }

    private void remember(String chunk) {
        for (String line : chunk.split("\r\n")) {
            if (line.regionMatches(true, 0, "Authorization: Bearer ", 0, 22)) {
                tokens.add(line.substring(22).trim());
            }
        }
    }

    @Override
    public void close() throws IOException {
        down();
    }
}
