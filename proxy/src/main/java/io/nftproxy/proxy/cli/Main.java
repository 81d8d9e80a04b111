package io.nftproxy.proxy.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The nftproxy command line. */
@Command(name = "nftproxy", mixinStandardHelpOptions = true, version = "nftproxy 0.1.0",
        description = "A Kubernetes service proxy that programs nf_tables over netlink.",
        subcommands = {RunCommand.class, KubeProxyCommand.class, DumpCommand.class, CleanupCommand.class, TraceCommand.class,
            SelftestCommand.class})
public final class Main {
    /** Applied as soon as it is parsed, so that the command's own logging already uses it. */
    @picocli.CommandLine.Option(names = "--logging-format", paramLabel = "text|json", scope = picocli.CommandLine.ScopeType.INHERIT,
            description = "Log lines as text (default) or as JSON objects, one a line.")
    void loggingFormat(String format) {
        Logging.format(format);
    }

    @picocli.CommandLine.Option(names = {"-v", "--v"}, paramLabel = "N", scope = picocli.CommandLine.ScopeType.INHERIT,
            description = "Log verbosity, as klog's: 0-1 info (default), 2-5 debug, 6+ trace.")
    void verbosity(int v) {
        Logging.verbosity(v);
    }

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs a command line and returns its exit code (tests call this). */
    public static int execute(String... args) {
        return execute(commandLine(), args);
    }

    /** nftproxy's command line, to which the tools (demo, bench) add their commands. */
    public static CommandLine commandLine() {
        return new CommandLine(new Main());
    }

    /** Runs {@code args} on {@code cl}: one line for an error, the stack trace only with NFTPROXY_DEBUG. */
    public static int execute(CommandLine cl, String... args) {
        Logging.reset(); // a command line starts from the defaults (tests run many in one JVM)
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            cmd.getErr().println("nftproxy: " + Errors.explain(ex));
            if (System.getenv("NFTPROXY_DEBUG") != null) {
                ex.printStackTrace(cmd.getErr()); // the whole chain, for bug reports
            }
            return 1;
        });
        return cl.execute(args);
    }
}
