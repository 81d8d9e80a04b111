package io.nftproxy.proxy.cli;

import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;

/**
 * {@code --logging-format text|json} and {@code -v N}, as Kubernetes components take them. At the
 * default verbosity a log line is one line: text lines carry no stack trace (from -v 2 they do),
 * and the client library (fabric8), whose warnings about a refused connection come with pages of
 * trace, says only errors: our own line says what failed and why. At start-up logback is
 * configured by {@link LogConfigurator}, with these defaults.
 */
final class Logging {
    /** The library behind the Kubernetes client (its HTTP stack, the JDK's, does not log through slf4j). */
    private static final String[] LIBRARIES = {"io.fabric8"};
    private static String format = "text";
    private static int verbosity;
    /** Whether the command line set them: a flag wins over the configuration file's logging section. */
    private static boolean formatFlag;
    private static boolean verbosityFlag;

    private Logging() {
    }

    /** From the command line: replaces the console appender's encoder; logs go to standard error either way. */
    static synchronized void format(String f) {
        formatFlag = true;
        setFormat(f);
    }

    /** From a configuration file's logging section, for what the command line did not set. */
    static synchronized void fromConfig(String f, int v) {
        if (!formatFlag && !f.equals(format)) {
            setFormat(f);
        }
        if (!verbosityFlag && v != verbosity) {
            setVerbosity(v);
        }
    }

    /** The log format in effect. */
    static synchronized String format() {
        return format;
    }

    /** The verbosity in effect. */
    static synchronized int verbosity() {
        return verbosity;
    }

    /** Back to the defaults (tests run many command lines in one JVM). */
    static synchronized void reset() {
        formatFlag = false;
        verbosityFlag = false;
        format = "text";
        verbosity = 0;
        apply();
    }

    private static void setFormat(String f) {
        if (!f.equals("text") && !f.equals("json")) {
            throw new IllegalArgumentException("unknown --logging-format '" + f + "' (expected text or json)");
        }
        format = f;
        apply();
    }

    /** klog's verbosity: up to 1 is info, 2 to 5 debug, above trace; the libraries' warnings from 4, their debug from 6. */
    static synchronized void verbosity(int v) {
        verbosityFlag = true;
        setVerbosity(v);
    }

    private static void setVerbosity(int v) {
        if (v < 0) {
            throw new IllegalArgumentException("-v must not be negative");
        }
        verbosity = v;
        apply();
    }

    /** logback's start-up configuration: the defaults, before any command line is read. */
    static synchronized void configure(LoggerContext ctx) {
        apply(ctx);
    }

    private static void apply() {
        apply((LoggerContext) LoggerFactory.getILoggerFactory());
    }

    private static void apply(LoggerContext ctx) {
        ctx.getLogger("io.nftproxy").setLevel(verbosity <= 1 ? Level.INFO : verbosity <= 5 ? Level.DEBUG : Level.TRACE);
        for (String lib : LIBRARIES) {
            ctx.getLogger(lib).setLevel(verbosity < 4 ? Level.ERROR : verbosity < 6 ? Level.WARN : Level.DEBUG);
        }
        Encoder<ILoggingEvent> encoder;
        if (format.equals("json")) {
            encoder = new JsonLogEncoder();
        } else {
            PatternLayoutEncoder p = new PatternLayoutEncoder();
            p.setPattern("%d{HH:mm:ss.SSS} %-5level %logger{0}: %msg%n" + (verbosity < 2 ? "%nopex" : ""));
            encoder = p;
        }
        encoder.setContext(ctx);
        encoder.start();
        ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
        appender.setContext(ctx);
        appender.setName("STDERR");
        appender.setTarget("System.err");
        appender.setEncoder(encoder);
        appender.start();
        Logger root = ctx.getLogger(Logger.ROOT_LOGGER_NAME);
        root.detachAndStopAllAppenders();
        root.addAppender(appender);
    }
}
