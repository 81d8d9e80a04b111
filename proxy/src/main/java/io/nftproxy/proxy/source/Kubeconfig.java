package io.nftproxy.proxy.source;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.AuthInfo;
import io.fabric8.kubernetes.api.model.NamedAuthInfo;
import io.fabric8.kubernetes.api.model.NamedCluster;
import io.fabric8.kubernetes.api.model.NamedContext;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.OAuthTokenProvider;
import io.fabric8.kubernetes.client.internal.KubeConfigUtils;

/**
 * A client configuration from a kubeconfig file, as a node's components read theirs: one error
 * naming the file and what is wrong with it, instead of a client that fails later; {@code --master}
 * over the file's server; and a user's {@code tokenFile} (kubeadm's kube-proxy kubeconfig points
 * at the service account's projected token, which the kubelet rotates) re-read as it changes,
 * which the client library does not do by itself.
 */
public final class Kubeconfig {
    private Kubeconfig() {
    }

    /** A kubeconfig that cannot be used: the message names the file. */
    public static final class InvalidKubeconfigException extends IOException {
        public InvalidKubeconfigException(String message) {
            super(message);
        }
    }

    /**
     * The configuration for {@code file}, with {@code master} (may be null) as the API server's
     * address if given. Without a file, {@code master} alone (no credentials, as kube-proxy's
     * {@code --master} without {@code --kubeconfig}).
     */
    public static Config load(Path file, String master) throws InvalidKubeconfigException {
        if (file == null) {
            if (master == null || master.isBlank()) {
                throw new InvalidKubeconfigException("neither a kubeconfig nor --master gives the API server");
            }
            Config cfg = Config.empty();
            cfg.setMasterUrl(master);
            return cfg;
        }
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new InvalidKubeconfigException("kubeconfig " + file + ": no such file");
        } catch (IOException e) {
            throw new InvalidKubeconfigException("kubeconfig " + file + ": cannot be read: " + e.getMessage());
        }
        io.fabric8.kubernetes.api.model.Config parsed;
        try {
            parsed = KubeConfigUtils.parseConfigFromString(text);
        } catch (RuntimeException e) {
            throw new InvalidKubeconfigException("kubeconfig " + file + " does not parse: " + firstLine(e));
        }
        if (parsed == null) {
            throw new InvalidKubeconfigException("kubeconfig " + file + " is empty");
        }
        NamedContext context = current(parsed, file);
        NamedCluster cluster = named(parsed.getClusters(), context.getContext().getCluster(), NamedCluster::getName, file, "cluster");
        String server = cluster.getCluster() == null ? null : cluster.getCluster().getServer();
        if ((server == null || server.isBlank()) && (master == null || master.isBlank())) {
            throw new InvalidKubeconfigException("kubeconfig " + file + ": cluster '" + cluster.getName() + "' has no server");
        }
        AuthInfo user = null;
        String userName = context.getContext().getUser();
        if (userName != null && !userName.isEmpty()) {
            user = named(parsed.getUsers(), userName, NamedAuthInfo::getName, file, "user").getUser();
        }
        Config cfg;
        try {
            cfg = Config.fromKubeconfig(context.getName(), text, file.toAbsolutePath().toString());
        } catch (RuntimeException e) {
            throw new InvalidKubeconfigException("kubeconfig " + file + ": " + firstLine(e));
        }
        if (master != null && !master.isBlank()) {
            cfg.setMasterUrl(master);
        }
        if (user != null && (user.getToken() == null || user.getToken().isEmpty()) && user.getTokenFile() != null
                && !user.getTokenFile().isEmpty()) {
            Path tokenFile = file.toAbsolutePath().getParent().resolve(user.getTokenFile());
            TokenFile tokens = new TokenFile(tokenFile, Clock.systemUTC());
            try {
                tokens.read();
            } catch (IOException e) {
                throw new InvalidKubeconfigException("kubeconfig " + file + ": user '" + userName + "': tokenFile " + tokenFile
                        + ": " + (e instanceof NoSuchFileException ? "no such file" : e.getMessage()));
            }
            cfg.setOauthTokenProvider(tokens);
        }
        return cfg;
    }

    private static NamedContext current(io.fabric8.kubernetes.api.model.Config parsed, Path file) throws InvalidKubeconfigException {
        List<NamedContext> contexts = parsed.getContexts() == null ? List.of() : parsed.getContexts();
        String name = parsed.getCurrentContext();
        if (name == null || name.isEmpty()) {
            if (contexts.size() == 1) {
                return contexts.get(0);
            }
            throw new InvalidKubeconfigException("kubeconfig " + file + " has no current-context"
                    + (contexts.isEmpty() ? " and no contexts" : " and " + contexts.size() + " contexts to choose from"));
        }
        NamedContext c = named(contexts, name, NamedContext::getName, file, "context");
        if (c.getContext() == null) {
            throw new InvalidKubeconfigException("kubeconfig " + file + ": context '" + name + "' is empty");
        }
        return c;
    }

    private static <T> T named(List<T> items, String name, Function<T, String> nameOf, Path file, String what)
            throws InvalidKubeconfigException {
        if (items != null) {
            for (T t : items) {
                if (name != null && name.equals(nameOf.apply(t))) {
                    return t;
                }
            }
        }
        throw new InvalidKubeconfigException("kubeconfig " + file + ": no " + what + " named '" + name + "'");
    }

    private static String firstLine(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getMessage() == null) {
            t = t.getCause();
        }
        String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        return m.lines().findFirst().orElse(m);
    }

    /**
     * A bearer token read from a file, read again once a minute as client-go's cached file token
     * source does, so that a rotated service-account token is picked up. A failed re-read keeps the
     * last token (the kubelet replaces the file atomically, so a failure is passing).
     */
    static final class TokenFile implements OAuthTokenProvider {
        private static final Duration REFRESH = Duration.ofMinutes(1);
        private final Path file;
        private final Clock clock;
        private String token;
        private Instant readAt;

        TokenFile(Path file, Clock clock) {
            this.file = file;
            this.clock = clock;
        }

        synchronized String read() throws IOException {
            token = Files.readString(file).trim();
            readAt = clock.instant();
            return token;
        }

        @Override
        public synchronized String getToken() {
            if (token == null || !clock.instant().isBefore(readAt.plus(REFRESH))) {
                try {
                    read();
                } catch (IOException e) {
                    readAt = clock.instant(); // try again in a minute; keep the token we have
                }
            }
            return token;
        }
    }
}
