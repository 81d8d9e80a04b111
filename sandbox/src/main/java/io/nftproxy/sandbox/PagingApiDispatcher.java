package io.nftproxy.sandbox;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.mockwebserver.http.MockResponse;

/**
 * fabric8's CRUD mock API server, answering its version and paging a listing as kube-apiserver
 * does: a list asked with
 * {@code limit=N} answers at most N items and, while more remain, a {@code continue} token that
 * the next request hands back for the following page. The mock alone answers every item
 * whatever the limit, so a client's paging would go untried and unmeasured against it.
 *
 * <p>The token is the offset of the next item (opaque to clients, as the API server's is). The
 * pages of a listing are cut from the list its first page read, as kube-apiserver serves them
 * from the listing's first resource version; that read is kept until the last page is asked (a
 * listing abandoned halfway keeps it until the same listing is asked again from its start).
 */
public class PagingApiDispatcher extends KubernetesCrudDispatcher {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** What kube-apiserver answers on /version (the mock pretends to be 1.34). */
    static final String VERSION = "{\"major\":\"1\",\"minor\":\"34\",\"gitVersion\":\"v1.34.0\",\"platform\":\"linux/amd64\"}";
    private final List<String> pages = new ArrayList<>();
    /** The listings being paged, by their request without limit and token: all their items. */
    private final Map<String, ObjectNode> listings = new HashMap<>();

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
        int from = 0;
        List<String> rest = new ArrayList<>();
        for (String param : path.substring(q + 1).split("&")) {
            String name = param.substring(0, Math.max(0, param.indexOf('=')));
            String value = URLDecoder.decode(param.substring(param.indexOf('=') + 1), StandardCharsets.UTF_8);
            switch (name) {
                case "limit" -> limit = Integer.parseInt(value);
                case "continue" -> from = Integer.parseInt(value);
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
            ObjectNode list;
            synchronized (listings) {
                list = from == 0 ? null : listings.get(whole);
            }
            if (list == null) {
                MockResponse response = super.handleGet(whole);
                if (response.code() != 200 || !(JSON.readTree(response.getBody().getBytes()) instanceof ObjectNode read)
                        || !(read.get("items") instanceof ArrayNode)) {
                    return response; // an error, or one object rather than a list
                }
                list = read;
            }
            ArrayNode items = (ArrayNode) list.get("items");
            ObjectNode page = JSON.createObjectNode();
            list.fields().forEachRemaining(f -> {
                if (!f.getKey().equals("items")) {
                    page.set(f.getKey(), f.getValue().deepCopy());
                }
            });
            ArrayNode pageItems = page.putArray("items");
            for (int i = from; i < Math.min(items.size(), from + limit); i++) {
                pageItems.add(items.get(i));
            }
            ObjectNode meta = page.get("metadata") instanceof ObjectNode m ? m : page.putObject("metadata");
            int next = from + pageItems.size();
            synchronized (listings) {
                if (next < items.size()) {
                    meta.put("continue", Integer.toString(next));
                    meta.put("remainingItemCount", items.size() - next);
                    listings.put(whole, list);
                } else {
                    meta.remove("continue");
                    meta.remove("remainingItemCount");
                    listings.remove(whole);
                }
                pages.add(path);
            }
            return new MockResponse().setResponseCode(200).setBody(JSON.writeValueAsBytes(page));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The paged listings asked so far, each page's request path. */
    public List<String> pages() {
        synchronized (listings) {
            return List.copyOf(pages);
        }
    }
}
