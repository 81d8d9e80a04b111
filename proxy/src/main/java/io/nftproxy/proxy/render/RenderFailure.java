package io.nftproxy.proxy.render;

/**
 * One line saying why a service could not be rendered. A refusal the renderer means (an invalid
 * value: {@link IllegalArgumentException}, {@link IllegalStateException}) is its message; anything
 * else is a defect, said as such with the exception's type and where it was thrown, so that the
 * log line alone is enough to report it (the stack trace is logged at debug level).
 */
public final class RenderFailure {
    private RenderFailure() {
    }

    public static String describe(RuntimeException e) {
        if ((e instanceof IllegalArgumentException || e instanceof IllegalStateException) && e.getMessage() != null) {
            return e.getMessage();
        }
        StringBuilder sb = new StringBuilder("internal error (please report it): ").append(e.getClass().getSimpleName());
        if (e.getMessage() != null) {
            sb.append(": ").append(e.getMessage());
        }
        StackTraceElement[] st = e.getStackTrace();
        if (st.length > 0) {
            sb.append(" at ").append(st[0].getClassName().substring(st[0].getClassName().lastIndexOf('.') + 1))
                    .append('.').append(st[0].getMethodName()).append(':').append(st[0].getLineNumber());
        }
        return sb.toString();
    }
}
