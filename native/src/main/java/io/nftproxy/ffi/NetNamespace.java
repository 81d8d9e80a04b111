package io.nftproxy.ffi;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * A network namespace named by a file: {@code /run/netns/NAME} (from {@code ip netns add}) or any
 * {@code /proc/PID/ns/net}. Sockets keep the namespace they were created in, so work that needs the
 * namespace only at socket creation runs {@link #call} on a short-lived thread that enters the
 * namespace, creates what it needs and ends; the calling thread never moves.
 */
public record NetNamespace(Path file) {
    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 0x80000;
    private static final int CLONE_NEWNET = 0x40000000;

    /** The namespace {@code ip netns add NAME} created. */
    public static NetNamespace named(String name) {
        if (name.isEmpty() || name.contains("/") || name.equals(".") || name.equals("..")) {
            throw new IllegalArgumentException("invalid network namespace name: '" + name + "'");
        }
        return new NetNamespace(Path.of("/run/netns", name));
    }

    @FunctionalInterface
    public interface IoCallable<T> {
        T call() throws Exception;
    }

    /** Runs {@code body} on a fresh thread that has entered this namespace, and returns its result. */
    public <T> T call(IoCallable<T> body) throws NativeException {
        if (!Files.exists(file)) {
            throw new NativeException("open network namespace " + file, Errno.ENOENT);
        }
        FutureTask<T> task = new FutureTask<>(() -> {
            LibC c = Native.libc();
            int fd = c.open(file.toString(), O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                throw new NativeException("open " + file, Native.errno());
            }
            try {
                if (c.setns(fd, CLONE_NEWNET) < 0) {
                    throw new NativeException("setns " + file, Native.errno());
                }
            } finally {
                c.close(fd);
            }
            // This thread now lives in the target namespace and ends when body returns.
            return body.call();
        });
        Thread t = new Thread(task, "netns-" + file.getFileName());
        t.setDaemon(true);
        t.start();
        try {
            return task.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NativeException("interrupted entering " + file, Errno.EINTR);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof NativeException ne) {
                throw ne;
            }
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException("in network namespace " + file + ": " + cause, cause);
        }
    }

    @Override
    public String toString() {
        return file.toString();
    }
}
