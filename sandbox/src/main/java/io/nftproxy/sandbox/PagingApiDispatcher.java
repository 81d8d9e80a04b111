package io.nftproxy.sandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;

/**
 * fabric8's CRUD mock API server, answering its version and paging a listing as kube-apiserver
 * does: a list asked with {@code limit=N} answers at most N items and, while more remain, a
 * {@code continue} token that the next request hands back for the following page. The mock
 * alone answers every item whatever the limit, so a client's paging would go untried and
 * unmeasured against it.
 *
 * <p>The token names the listing and the offset of its next item (opaque to clients, as the API
 * server's is). The pages of a listing are cut from the list its first page read, as
 * kube-apiserver serves them from the listing's first resource version; that read is kept until
 * its last page is asked, for each listing apart: clients paging the same query at once (three
 * nodes starting against one API server) each get their own. A token the server no longer knows
 * (a listing abandoned halfway and dropped since), or one handed to another query, is answered
 * 410 Gone, as kube-apiserver answers an expired one, and the client lists again from the start.
 *
 * <p>And a watch from a resource version starts there, as kube-apiserver's does: the mock alone
 * opens every watch with every object it holds as ADDED, so an informer that had just listed
 * 10,000 services heard of each once more (a benchmark's daemon spent a second of CPU on them
 * after its start).
 */
public class PagingApiDispatcher extends KubernetesCrudDispatcher {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** What kube-apiserver answers on /version (the mock pretends to be 1.34). */
    static final String VERSION = "{\"major\":\"1\",\"minor\":\"34\",\"gitVersion\":\"v1.34.0\",\"platform\":\"linux/amd64\"}";
    private final List<String> pages = new ArrayList<>();
    /**
     * The listings being paged, by their id: all their items. At most {@link #KEPT} are kept, the
     * one asked least recently dropped first (a client that gave up halfway never asks for the
     * rest).
     */
    private final Map<Long, Listing> listings = new LinkedHashMap<>(16, 0.75f, true);
    private long lastListing;
    static final int KEPT = 64;

    @Override
    public MockResponse handleGet(String path) {
        if (path.equals("/version") || path.startsWith("/version?")) {
            // The mock would answer every object it holds as one list, as for any path it does not know.
            return new MockResponse().setResponseCode(200).setBody(VERSION);
        }
        int q = path.indexOf('?');
        if (q < 0) {
            return super.handleGet(path);
        }
        int limit = 0;
        String token = null;
        List<String> rest = new ArrayList<>();
        for (String param : path.substring(q + 1).split("&")) {
            String name = param.substring(0, Math.max(0, param.indexOf('=')));
            String value = URLDecoder.decode(param.substring(param.indexOf('=') + 1), StandardCharsets.UTF_8);
            switch (name) {
                case "limit" -> limit = Integer.parseInt(value);
                case "continue" -> token = value;
                default -> rest.add(param);
            }
        }
        String whole = path.substring(0, q) + (rest.isEmpty() ? "" : "?" + String.join("&", rest));
        if (limit <= 0) {
            return super.handleGet(whole);
        }
        try {
            // A listing's pages come from the one reading its first page made, as the API server
            // serves them from the listing's resource version (and the mock reads its objects once).
            long id;
            int from;
            Listing list;
            if (token == null) {
                MockResponse response = super.handleGet(whole);
                if (response.code() != 200 || (list = Listing.read(whole, response.getBody().getBytes())) == null) {
                    return response; // an error, or one object rather than a list
                }
                from = 0;
                synchronized (listings) {
                    id = ++lastListing;
                }
            } else {
                int colon = token.indexOf(':');
                try {
                    id = Long.parseLong(token.substring(0, Math.max(0, colon)));
                    from = Integer.parseInt(token.substring(colon + 1));
                } catch (NumberFormatException e) {
                    return expired(token);
                }
                synchronized (listings) {
                    list = listings.get(id);
                }
                if (list == null || !list.query.equals(whole) || from < 0 || from > list.size()) {
                    return expired(token);
                }
            }
            int next = Math.min(list.size(), from + limit);
            ObjectNode meta = list.metadata.deepCopy();
            synchronized (listings) {
                if (next < list.size()) {
                    meta.put("continue", id + ":" + next);
                    meta.put("remainingItemCount", list.size() - next);
                    listings.put(id, list);
                    while (listings.size() > KEPT) {
                        listings.remove(listings.keySet().iterator().next());
                    }
                } else {
                    listings.remove(id);
                }
                pages.add(path);
            }
            return new MockResponse().setResponseCode(200).setBody(list.page(from, next, meta));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public MockResponse handleWatch(String path) {
        MockResponse response = super.handleWatch(path);
        long since = resourceVersion(path);
        WebSocketListener events = response.getWebSocketListener();
        return since <= 0 || events == null ? response : response.withWebSocketUpgrade(new Since(events, since));
    }

    /** The watch's {@code resourceVersion}; 0 for none or "0" (any: the mock's whole state, as before). */
    private static long resourceVersion(String path) {
        int q = path.indexOf('?');
        for (String param : q < 0 ? new String[0] : path.substring(q + 1).split("&")) {
            if (param.startsWith("resourceVersion=")) {
                try {
                    return Long.parseLong(param.substring("resourceVersion=".length()));
                } catch (NumberFormatException e) {
                    return 0;
                }
            }
        }
        return 0;
    }

    /**
     * A watch's events after {@code since}: the mock's opening ADDED events for objects at or
     * before it are not sent (an object added or changed later has a later version; a deletion
     * is always sent).
     */
    private static final class Since extends WebSocketListener {
        private final WebSocketListener events;
        private final long since;

        Since(WebSocketListener events, long since) {
            this.events = events;
            this.since = since;
        }

        @Override
        public void onBeforeAccept(WebSocket ws, Response response) {
            events.onBeforeAccept(ws, response);
        }

        @Override
        public void onOpen(WebSocket ws, Response response) {
            events.onOpen(new WebSocket() {
                @Override
                public RecordedRequest request() {
                    return ws.request();
                }

                @Override
                public boolean send(String text) {
                    return before(text) || ws.send(text);
                }

                @Override
                public boolean send(byte[] bytes) {
                    return before(new String(bytes, StandardCharsets.UTF_8)) || ws.send(bytes);
                }

                @Override
                public boolean close(int code, String reason) {
                    return ws.close(code, reason);
                }
            }, response);
        }

        /** Whether the event is the mock's opening ADDED of an object at or before {@code since}. */
        private boolean before(String event) {
            try {
                JsonNode e = JSON.readTree(event);
                return "ADDED".equals(e.path("type").asText())
                        && e.path("object").path("metadata").path("resourceVersion").asLong(Long.MAX_VALUE) <= since;
            } catch (IOException e) {
                return false;
            }
        }

        @Override
        public void onMessage(WebSocket ws, String text) {
            events.onMessage(ws, text);
        }

        @Override
        public void onMessage(WebSocket ws, byte[] bytes) {
            events.onMessage(ws, bytes);
        }

        @Override
        public void onClosing(WebSocket ws, int code, String reason) {
            events.onClosing(ws, code, reason);
        }

        @Override
        public void onClosed(WebSocket ws, int code, String reason) {
            events.onClosed(ws, code, reason);
        }

        @Override
        public void onFailure(WebSocket ws, Throwable t, Response response) {
            events.onFailure(ws, t, response);
        }
    }

    /** What kube-apiserver answers a continue token it cannot serve any more. */
    private static MockResponse expired(String token) {
        ObjectNode status = JSON.createObjectNode();
        status.put("kind", "Status").put("apiVersion", "v1").putObject("metadata");
        status.put("status", "Failure").put("reason", "Expired").put("code", 410)
                .put("message", "The provided continue parameter is too old to display a consistent list result. "
                        + "You can start a new list without the continue parameter (" + token + ")");
        return new MockResponse().setResponseCode(410).setBody(status.toString());
    }

    /**
     * A list as the mock answered it: its items' bytes where they are in the answer (found by
     * reading it once as tokens, not as a tree: a list of 10,000 slices is 12 MB), so that a page
     * is its items' bytes copied between the list's other fields.
     */
    private static final class Listing {
        /** The request it answers, without limit and token: a token serves only its own query. */
        final String query;
        final byte[] json;
        final ObjectNode head;
        final ObjectNode metadata;
        final int[] starts;
        final int[] ends;

        private Listing(String query, byte[] json, ObjectNode head, ObjectNode metadata, int[] starts, int[] ends) {
            this.query = query;
            this.json = json;
            this.head = head;
            this.metadata = metadata;
            this.starts = starts;
            this.ends = ends;
        }

        int size() {
            return starts.length;
        }

        static Listing read(String query, byte[] json) throws IOException {
            ObjectNode head = JSON.createObjectNode();
            ObjectNode metadata = JSON.createObjectNode();
            List<int[]> items = null;
            try (JsonParser p = JSON.getFactory().createParser(json)) {
                if (p.nextToken() != JsonToken.START_OBJECT) {
                    return null;
                }
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String field = p.currentName();
                    JsonToken t = p.nextToken();
                    if (field.equals("items") && t == JsonToken.START_ARRAY) {
                        items = new ArrayList<>();
                        while (p.nextToken() == JsonToken.START_OBJECT) {
                            int start = (int) p.currentTokenLocation().getByteOffset();
                            p.skipChildren();
                            items.add(new int[] {start, (int) p.currentLocation().getByteOffset()});
                        }
                    } else if (field.equals("metadata") && t == JsonToken.START_OBJECT) {
                        metadata = JSON.readTree(p);
                    } else {
                        head.set(field, JSON.readTree(p));
                    }
                }
            }
            if (items == null) {
                return null;
            }
            int[] starts = new int[items.size()];
            int[] ends = new int[items.size()];
            for (int i = 0; i < starts.length; i++) {
                starts[i] = items.get(i)[0];
                ends[i] = items.get(i)[1];
            }
            return new Listing(query, json, head, metadata, starts, ends);
        }

        /** Items [from, to) between the list's fields, with this metadata. */
        byte[] page(int from, int to, ObjectNode meta) throws IOException {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ObjectNode top = head.deepCopy();
            top.set("metadata", meta);
            byte[] fields = JSON.writeValueAsBytes(top);
            out.write(fields, 0, fields.length - 1); // without its closing brace
            out.write(",\"items\":[".getBytes(StandardCharsets.UTF_8));
            for (int i = from; i < to; i++) {
                if (i > from) {
                    out.write(',');
                }
                out.write(json, starts[i], ends[i] - starts[i]);
            }
            out.write("]}".getBytes(StandardCharsets.UTF_8));
            return out.toByteArray();
        }
    }

    /** The paged listings asked so far, each page's request path. */
    public List<String> pages() {
        synchronized (listings) {
            return List.copyOf(pages);
        }
    }
}
