package io.nftproxy.testkit;

import java.util.List;
import java.util.Map;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.sandbox.Netns;

/** A throwaway network namespace for a kernel test, made only after the skip/fail rule allows it. */
public final class TestNetns implements AutoCloseable {
    private final Netns ns;

    private TestNetns(Netns ns) {
        this.ns = ns;
    }

    /** Creates a fresh namespace; skips or fails per {@link Kernel#require()} when that is impossible. */
    public static TestNetns create(String prefix) {
        Kernel.require();
        return new TestNetns(Netns.create(prefix));
    }

    public String name() {
        return ns.name();
    }

    public NetNamespace ns() {
        return ns.ns();
    }

    /** Runs a command inside the namespace; returns stdout; fails with stderr on non-zero exit. */
    public String exec(String... cmd) {
        return ns.exec(cmd);
    }

    public String execInput(String stdin, String... cmd) {
        return ns.execInput(stdin, cmd);
    }

    /** Loads an nft script into the namespace with {@code nft -f -}. */
    public String nft(String script) {
        return execInput(script, "nft", "-f", "-");
    }

    /** The independent witness: {@code nft -j list ruleset}, parsed. */
    @SuppressWarnings("unchecked")
    public List<Object> nftJson() {
        Object root = Json.parse(exec("nft", "-j", "list", "ruleset"));
        return (List<Object>) ((Map<String, Object>) root).get("nftables");
    }

    public static String run(List<String> cmd, String stdin) {
        return Netns.run(cmd, stdin);
    }

    @Override
    public void close() {
        ns.close();
    }
}
