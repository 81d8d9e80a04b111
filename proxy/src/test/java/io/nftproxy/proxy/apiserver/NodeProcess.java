package io.nftproxy.proxy.apiserver;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.nftproxy.ffi.NativeException;
import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.proxy.cli.Main;

/**
 * The proxy as a node runs it: its own JVM, its command line, its standard error collected, its
 * health port probed over HTTP. Stopped with SIGTERM, as the kubelet stops a container.
 */
public final class NodeProcess implements AutoCloseable {
    private final Process process;
    private final StringBuffer stderr = new StringBuffer();

    private NodeProcess(Process process) {
        this.process = process;
        Thread t = new Thread(() -> {
            byte[] buf = new byte[4096];
            try (InputStream in = process.getInputStream()) {
                for (int n; (n = in.read(buf)) > 0; ) {
                    stderr.append(new String(buf, 0, n, StandardCharsets.UTF_8));
                }
            } catch (IOException e) {
                // the process ended
            }
        }, "node-process-output");
        t.setDaemon(true);
        t.start();
    }

    /** {@code nftproxy ARGS} in a new JVM on this test's class path; standard output and error together. */
    public static NodeProcess start(List<String> args) throws IOException {
        return new NodeProcess(new ProcessBuilder(command(args)).redirectErrorStream(true).start());
    }

    /** The command line that runs {@code nftproxy ARGS} in a new JVM on this test's class path. */
    public static List<String> command(List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"), "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), Main.class.getName()));
        cmd.addAll(args);
        return cmd;
    }

    /** Any command line, run as {@link #start} runs nftproxy. */
    public static NodeProcess run(List<String> cmd) throws IOException {
        return new NodeProcess(new ProcessBuilder(cmd).redirectErrorStream(true).start());
    }

    /** A loopback port free now. */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** What it printed so far, and its exit code once it has ended. */
    public String output() {
        return stderr + (process.isAlive() ? "" : "[exit " + process.exitValue() + "]");
    }

    /** The status code of GET http://127.0.0.1:PORT/PATH, or -1 when nothing answers. */
    public static int get(int port, String path) {
        return fetch(port, path).code();
    }

    /** An answer: its status code (-1 when nothing answered) and body. */
    public record Answer(int code, String body) {
    }

    /** GET http://127.0.0.1:PORT/PATH. */
    public static Answer fetch(int port, String path) {
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + port + path).toURL().openConnection();
            c.setConnectTimeout(2000);
            c.setReadTimeout(5000);
            int code = c.getResponseCode();
            InputStream in = code < 400 ? c.getInputStream() : c.getErrorStream();
            String body = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
            c.disconnect();
            return new Answer(code, body);
        } catch (IOException e) {
            return new Answer(-1, e.toString());
        }
    }

    /** The same, from inside network namespace {@code ns}. */
    public static Answer fetch(NetNamespace ns, int port, String path) {
        try {
            return ns.call(() -> fetch(port, path));
        } catch (NativeException e) {
            return new Answer(-1, e.toString());
        }
    }

    /** SIGTERM, then the exit code (killed after 30 s). */
    public int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
        return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            stop();
        }
    }
}
