package io.nftproxy.proxy.cli;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.encoder.EncoderBase;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import org.slf4j.event.KeyValuePair;

/**
 * One JSON object a line, in the shape of Kubernetes components' {@code --logging-format json}:
 * {@code ts} (seconds since the epoch), {@code caller}, {@code msg}, {@code v} (the verbosity the
 * line needs), then the line's key/values; and, as the structured logs of other tools have it, a
 * {@code level}. An error's exception goes in {@code err}.
 */
public final class JsonLogEncoder extends EncoderBase<ILoggingEvent> {
    private static final JsonFactory JSON = new JsonFactory();
    private static final byte[] NONE = new byte[0];

    @Override
    public byte[] headerBytes() {
        return NONE;
    }

    @Override
    public byte[] encode(ILoggingEvent e) {
        StringWriter out = new StringWriter(256);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeFieldName("ts");
            g.writeNumber(BigDecimal.valueOf(e.getTimeStamp(), 3)); // 1795377191.222, as klog writes it
            g.writeStringField("caller", e.getLoggerName().substring(e.getLoggerName().lastIndexOf('.') + 1));
            g.writeStringField("level", e.getLevel().toString().toLowerCase(Locale.ROOT));
            g.writeStringField("msg", e.getFormattedMessage());
            g.writeNumberField("v", verbosity(e.getLevel()));
            if (e.getKeyValuePairs() != null) {
                for (KeyValuePair kv : e.getKeyValuePairs()) {
                    g.writeFieldName(kv.key);
                    if (kv.value instanceof Number n) {
                        g.writeNumber(n.toString());
                    } else if (kv.value instanceof Boolean b) {
                        g.writeBoolean(b);
                    } else {
                        g.writeString(String.valueOf(kv.value));
                    }
                }
            }
            IThrowableProxy t = e.getThrowableProxy();
            if (t != null) {
                g.writeStringField("err", t.getClassName() + ": " + t.getMessage());
                g.writeStringField("stacktrace", ThrowableProxyUtil.asString(t));
            }
            g.writeEndObject();
        } catch (IOException ex) {
            return ("{\"msg\":\"log line could not be encoded\"}\n").getBytes(StandardCharsets.UTF_8);
        }
        return (out + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** klog's verbosity for a level: errors, warnings and info at 0, debug at 4, trace at 6. */
    static int verbosity(Level l) {
        return l.toInt() >= Level.INFO_INT ? 0 : l.toInt() >= Level.DEBUG_INT ? 4 : 6;
    }

    @Override
    public byte[] footerBytes() {
        return NONE;
    }
}
