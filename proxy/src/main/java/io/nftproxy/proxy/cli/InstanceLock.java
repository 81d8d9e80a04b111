package io.nftproxy.proxy.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One nftproxy per network namespace and table: two would each see the other's commits as drift
 * and rebuild their tables in turn for ever. The lock is a file under /run/nftproxy named after
 * the namespace's inode and the table, locked for the process's life (the kernel drops the lock
 * when the process ends, however it ends). The DaemonSet mounts /run/nftproxy from the host, so
 * the lock holds across pods too.
 */
final class InstanceLock implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(InstanceLock.class);
    static final Path DIR = Path.of("/run/nftproxy");

    private final FileChannel channel;
    private final FileLock lock;

    private InstanceLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** The namespace's inode: a named one's bind mount, or our own. */
    static long namespaceInode(String netns) throws IOException {
        Path p = netns == null ? Path.of("/proc/self/ns/net") : Path.of("/run/netns", netns);
        return ((Number) Files.getAttribute(p, "unix:ino")).longValue();
    }

    /**
     * Takes the lock, or fails naming the holder. When the lock cannot be taken at all (no
     * /run to write to) it warns and returns null: better running than refusing for that.
     */
    static InstanceLock acquire(Path dir, String netns, String table) throws IOException {
        Path file;
        FileChannel ch;
        try {
            Files.createDirectories(dir);
            file = dir.resolve("netns-" + namespaceInode(netns) + "-" + table + ".lock");
            ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        } catch (IOException | SecurityException e) {
            LOG.warn("cannot take the instance lock in {} ({}); a second nftproxy for this namespace would not be refused",
                    dir, e.getMessage());
            return null;
        }
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null; // held by this very process
        }
        if (lock == null) {
            String holder = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).trim();
            ch.close();
            throw new IOException("another nftproxy" + (holder.isEmpty() ? "" : " (pid " + holder + ")") + " already programs table "
                    + table + " in " + (netns == null ? "this network namespace" : "network namespace " + netns) + " (lock " + file
                    + "); two would undo each other's commits");
        }
        ch.truncate(0);
        ch.write(ByteBuffer.wrap(Long.toString(ProcessHandle.current().pid()).getBytes(StandardCharsets.UTF_8)), 0);
        return new InstanceLock(ch, lock);
    }

    @Override
    public void close() throws IOException {
        lock.release();
        channel.close();
    }
}
