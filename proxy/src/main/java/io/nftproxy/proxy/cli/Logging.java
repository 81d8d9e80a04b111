package io.nftproxy.proxy.cli;

import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;

/** {@code --logging-format text|json} and {@code -v N}, as Kubernetes components take them. */
final class Logging {
    private Logging() {
    }

    /** Replaces the console appender's encoder; logs go to standard error either way. */
    static void format(String format) {
        LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
        Encoder<ILoggingEvent> encoder;
        switch (format) {
            case "json" -> encoder = new JsonLogEncoder();
            case "text" -> {
                PatternLayoutEncoder p = new PatternLayoutEncoder();
                p.setPattern("%d{HH:mm:ss.SSS} %-5level %logger{0}: %msg%n");
                encoder = p;
            }
            default -> throw new IllegalArgumentException("unknown --logging-format '" + format + "' (expected text or json)");
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

    /** klog's verbosity: up to 1 is info, 2 to 5 debug, above trace; for our loggers only. */
    static void verbosity(int v) {
        if (v < 0) {
            throw new IllegalArgumentException("-v must not be negative");
        }
        LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
        ctx.getLogger("io.nftproxy").setLevel(v <= 1 ? Level.INFO : v <= 5 ? Level.DEBUG : Level.TRACE);
    }
}
