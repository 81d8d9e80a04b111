package io.nftproxy.proxy.source.client;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import javax.net.ssl.KeyManager;
import javax.net.ssl.TrustManager;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.http.TlsVersion;
import io.fabric8.kubernetes.client.http.WebSocket;

/**
 * fabric8's HTTP client with kube-proxy's client-side rate limit: every request (a list, the
 * start of a watch, an event sent; not a listing's later pages: {@link #laterPage}) takes a
 * token from one {@link TokenBucket} shared by the client and every client derived from it. A
 * request without a token is not blocked on the thread that sends it (fabric8 sends from its own
 * event-loop threads, which must never wait):
 * it is sent later, from a timer, when its token is due.
 */
public final class RateLimitedHttpClient implements HttpClient {
    private final HttpClient delegate;
    private final TokenBucket bucket;

    private RateLimitedHttpClient(HttpClient delegate, TokenBucket bucket) {
        this.delegate = delegate;
        this.bucket = bucket;
    }

    /**
     * A factory of clients limited as kube-proxy's client is by {@code qps} and {@code burst}:
     * qps 0 is client-go's default 5, burst 0 its default 10, a negative qps no limit at all.
     */
    public static HttpClient.Factory factory(HttpClient.Factory of, float qps, int burst) {
        if (qps < 0) {
            return of;
        }
        double q = qps == 0 ? 5 : qps;
        int b = burst == 0 ? 10 : burst;
        return new HttpClient.Factory() {
            @Override
            public HttpClient.Builder newBuilder(Config config) {
                return new LimitedBuilder(of.newBuilder(config), new TokenBucket(q, b, System.nanoTime()));
            }

            @Override
            public HttpClient.Builder newBuilder() {
                return new LimitedBuilder(of.newBuilder(), new TokenBucket(q, b, System.nanoTime()));
            }

            @Override
            public int priority() {
                return of.priority();
            }
        };
    }

    /** Runs {@code send} once a token is due: now, or later from the timer. */
    private <T> CompletableFuture<T> whenAllowed(Supplier<CompletableFuture<T>> send) {
        long wait = bucket.reserve(System.nanoTime());
        if (wait == 0) {
            return send.get();
        }
        Executor later = CompletableFuture.delayedExecutor(wait, TimeUnit.NANOSECONDS);
        return CompletableFuture.supplyAsync(send, later).thenCompose(f -> f);
    }

    /**
     * A listing's later pages (the requests that hand back its {@code continue} token) take no
     * token of their own: the informers page their listings (see {@code KubernetesSource}) where
     * kube-proxy's list once from the API server's cache, in one request, which its limit counts
     * once. Counting each page would make a listing of 10,000 services wait seconds for tokens
     * that kube-proxy never asks for.
     */
    static boolean laterPage(HttpRequest request) {
        String query = request.uri().getRawQuery();
        return query != null && (query.startsWith("continue=") || query.contains("&continue="));
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, Class<T> type) {
        return laterPage(request) ? delegate.sendAsync(request, type) : whenAllowed(() -> delegate.sendAsync(request, type));
    }

    @Override
    public CompletableFuture<HttpResponse<AsyncBody>> consumeBytes(HttpRequest request,
            AsyncBody.Consumer<List<ByteBuffer>> consumer) {
        return laterPage(request) ? delegate.consumeBytes(request, consumer)
                : whenAllowed(() -> delegate.consumeBytes(request, consumer));
    }

    @Override
    public WebSocket.Builder newWebSocketBuilder() {
        return new LimitedWebSocketBuilder(delegate.newWebSocketBuilder());
    }

    @Override
    public HttpClient.DerivedClientBuilder newBuilder() {
        return new LimitedDerivedBuilder(delegate.newBuilder(), bucket);
    }

    @Override
    public HttpRequest.Builder newHttpRequestBuilder() {
        return delegate.newHttpRequestBuilder();
    }

    @Override
    public boolean isClosed() {
        return delegate.isClosed();
    }

    @Override
    public void close() {
        delegate.close();
    }

    /** A watch may open a web socket: that takes a token too. */
    private final class LimitedWebSocketBuilder implements WebSocket.Builder {
        private final WebSocket.Builder b;

        LimitedWebSocketBuilder(WebSocket.Builder b) {
            this.b = b;
        }

        @Override
        public CompletableFuture<WebSocket> buildAsync(WebSocket.Listener listener) {
            return whenAllowed(() -> b.buildAsync(listener));
        }

        @Override
        public WebSocket.Builder subprotocol(String protocol) {
            b.subprotocol(protocol);
            return this;
        }

        @Override
        public WebSocket.Builder header(String name, String value) {
            b.header(name, value);
            return this;
        }

        @Override
        public WebSocket.Builder setHeader(String k, String v) {
            b.setHeader(k, v);
            return this;
        }

        @Override
        public WebSocket.Builder uri(URI uri) {
            b.uri(uri);
            return this;
        }

        @Override
        public WebSocket.Builder connectTimeout(long timeout, TimeUnit unit) {
            b.connectTimeout(timeout, unit);
            return this;
        }
    }

    /** A client derived from a limited one (fabric8 derives one per watch) shares its bucket. */
    private static class LimitedDerivedBuilder implements HttpClient.DerivedClientBuilder {
        private final HttpClient.DerivedClientBuilder b;
        final TokenBucket bucket;

        LimitedDerivedBuilder(HttpClient.DerivedClientBuilder b, TokenBucket bucket) {
            this.b = b;
            this.bucket = bucket;
        }

        @Override
        public HttpClient build() {
            return new RateLimitedHttpClient(b.build(), bucket);
        }

        @Override
        public HttpClient.DerivedClientBuilder addOrReplaceInterceptor(String name, Interceptor interceptor) {
            b.addOrReplaceInterceptor(name, interceptor);
            return this;
        }

        @Override
        public HttpClient.DerivedClientBuilder authenticatorNone() {
            b.authenticatorNone();
            return this;
        }

        @Override
        public HttpClient.DerivedClientBuilder tag(Object tag) {
            b.tag(tag);
            return this;
        }
    }

    /** The first client's builder: everything fabric8 sets goes to the real builder. */
    private static final class LimitedBuilder extends LimitedDerivedBuilder implements HttpClient.Builder {
        private final HttpClient.Builder b;

        LimitedBuilder(HttpClient.Builder b, TokenBucket bucket) {
            super(b, bucket);
            this.b = b;
        }

        @Override
        public HttpClient.Builder addOrReplaceInterceptor(String name, Interceptor interceptor) {
            b.addOrReplaceInterceptor(name, interceptor);
            return this;
        }

        @Override
        public HttpClient.Builder authenticatorNone() {
            b.authenticatorNone();
            return this;
        }

        @Override
        public HttpClient.Builder tag(Object tag) {
            b.tag(tag);
            return this;
        }

        @Override
        public HttpClient.Builder connectTimeout(long timeout, TimeUnit unit) {
            b.connectTimeout(timeout, unit);
            return this;
        }

        @Override
        public HttpClient.Builder sslContext(KeyManager[] keyManagers, TrustManager[] trustManagers) {
            b.sslContext(keyManagers, trustManagers);
            return this;
        }

        @Override
        public HttpClient.Builder followAllRedirects() {
            b.followAllRedirects();
            return this;
        }

        @Override
        public HttpClient.Builder proxyAddress(InetSocketAddress address) {
            b.proxyAddress(address);
            return this;
        }

        @Override
        public HttpClient.Builder proxyAuthorization(String credentials) {
            b.proxyAuthorization(credentials);
            return this;
        }

        @Override
        public HttpClient.Builder tlsVersions(TlsVersion... versions) {
            b.tlsVersions(versions);
            return this;
        }

        @Override
        public HttpClient.Builder tlsServerName(String name) {
            b.tlsServerName(name);
            return this;
        }

        @Override
        public HttpClient.Builder preferHttp11() {
            b.preferHttp11();
            return this;
        }

        @Override
        public HttpClient.Builder proxyType(HttpClient.ProxyType type) {
            b.proxyType(type);
            return this;
        }
    }
}
