package io.nftproxy.proxy.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * logback's configuration at start-up, in code (found through {@code META-INF/services}): the
 * console appender and levels that {@link Logging} gives the default verbosity, and the root
 * level from {@code NFTPROXY_LOG_LEVEL} (INFO when unset). An XML configuration still wins
 * ({@code -Dlogback.configurationFile}, or a {@code logback.xml} or {@code logback-test.xml} on
 * the class path): this configurator then leaves the work to logback's own.
 *
 * <p>Why not a logback.xml in the jar: reading one loads logback's XML configurator and the JDK's
 * XML parser, about 480 classes at every start, each of them parsed into the process's metaspace
 * or stored in the image's class-data-sharing archive (measured with
 * {@code -XX:DumpLoadedClassList} on {@code run --once}).
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_LOW_PRIORITY)
public final class LogConfigurator extends ContextAwareBase implements Configurator {
    @Override
    public ExecutionStatus configure(LoggerContext ctx) {
        if (System.getProperty("logback.configurationFile") != null || onClassPath("logback-test.xml")
                || onClassPath("logback.xml")) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        ctx.getLogger(Logger.ROOT_LOGGER_NAME).setLevel(Level.toLevel(System.getenv("NFTPROXY_LOG_LEVEL"), Level.INFO));
        Logging.configure(ctx);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }

    private static boolean onClassPath(String resource) {
        ClassLoader loader = LogConfigurator.class.getClassLoader();
        return loader != null && loader.getResource(resource) != null;
    }
}
