package io.nftproxy.proxy.kernel;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.nftproxy.proxy.cli.DryRunCliTest;


/** Runs the CLI in-process and captures what it prints. */
final class ProxyRun {
    record Result(int exit, String out, String err) {
    }

    static Result cli(String... args) {
        DryRunCliTest.Result r = DryRunCliTest.cli(args);
        return new Result(r.exit(), r.out(), r.err());
    }

    /** {@code run --manifests DIR --netns NODE --once} with the topology's node settings. */
    static Result once(Topology topo, Path manifests, String... extra) {
        return once(0, topo, manifests, extra);
    }

    /** The same, ending with {@code exit}. */
    static Result once(int exit, Topology topo, Path manifests, String... extra) {
        List<String> args = new ArrayList<>(List.of("run", "--manifests", manifests.toString(), "--netns", topo.node.name(),
                "--once", "--hostname-override", "node-a", "--cluster-cidr", "10.244.0.0/16,fd00:244::/64",
                "--service-cidr", "10.96.0.0/16,fd00:96::/64", "--node-ip", Topology.NODE_IP + "," + Topology.NODE_IP6));
        args.addAll(List.of(extra));
        Result r = cli(args.toArray(new String[0]));
        if (r.exit() != exit) {
            throw new AssertionError("nftproxy run exited " + r.exit() + ": " + r.err() + r.out());
        }
        return r;
    }
}
