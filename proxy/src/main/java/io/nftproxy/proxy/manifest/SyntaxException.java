package io.nftproxy.proxy.manifest;

/** A manifest that is not valid YAML or JSON, with the reason (and the line, where known). */
public final class SyntaxException extends RuntimeException {
    public SyntaxException(String message) {
        super(message);
    }
}
