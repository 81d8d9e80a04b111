package io.nftproxy.tools;

import io.nftproxy.proxy.cli.Main;
import picocli.CommandLine;

/**
 * nftproxy's command line with the tools added: the demo and the benchmark harness. They serve
 * the project (bin/nftproxy runs them from this jar) and are not in what a node runs.
 */
public final class Tools {
    private Tools() {
    }

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    public static int execute(String... args) {
        CommandLine cl = Main.commandLine();
        cl.addSubcommand(new DemoCommand());
        cl.addSubcommand(new BenchCommand());
        cl.addSubcommand(new BenchNetlinkCommand());
        return Main.execute(cl, args);
    }
}
