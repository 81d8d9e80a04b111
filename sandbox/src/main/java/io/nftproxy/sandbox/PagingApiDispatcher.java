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
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.mockwebserver.http.MockResponse;

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
