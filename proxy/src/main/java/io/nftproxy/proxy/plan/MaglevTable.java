package io.nftproxy.proxy.plan;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import io.nftproxy.proxy.model.Endpoint;

/**
 * Maglev's lookup table (Eisenbud et al., "Maglev: A Fast and Reliable Software Network Load
 * Balancer", NSDI 2016, section 3.4): {@code size} slots, a prime, each naming the endpoint a
 * connection whose hash falls in it goes to. Every endpoint fills the slots of its own
 * permutation of the table in turn, so each holds {@code size / k} slots give or take one; when an
 * endpoint comes or goes, the slots of the others mostly stay theirs (a few percent move), so
 * their connections are not sent elsewhere.
 *
 * <p>A pure function of the endpoints' addresses and ports: the permutations come from fixed
 * hashes of each endpoint's "address:port", and the endpoints are taken in that text's order, so
 * that every node (and every version that keeps {@link #hash}) builds the same table for the same
 * endpoints and sends a client to the same endpoint.
 *
 * <p>A class, not a record: its slots are an array, compared by content ({@link #equals}).
 */
public final class MaglevTable {
    /**
     * Slots per endpoint the table is sized for: Maglev's paper gives each backend about a
     * hundred, for a balance within about 1% (the slots of two endpoints differ by at most one).
     */
    public static final int SLOTS_PER_ENDPOINT = 100;
    /** The most endpoints a table is sized for: 100 slots each of 65,536 is 6.5 million slots, far past any service's use. */
    public static final int MAX_ENDPOINTS = 65_536;

    private final int size;
    private final List<Endpoint> endpoints;
    private final int[] slots;

    private MaglevTable(int size, List<Endpoint> endpoints, int[] slots) {
        this.size = size;
        this.endpoints = List.copyOf(endpoints);
        this.slots = slots;
    }

    /** The number of slots, a prime ({@link #sizeFor}). */
    public int size() {
        return size;
    }

    /** The endpoints, in the order the slots name them (their "address:port" order). */
    public List<Endpoint> endpoints() {
        return endpoints;
    }

    /** For each slot, the index in {@link #endpoints} of its endpoint (none without endpoints). */
    public int[] slots() {
        return slots.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MaglevTable t && t.size == size && t.endpoints.equals(endpoints) && Arrays.equals(t.slots, slots);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * size + endpoints.hashCode()) + Arrays.hashCode(slots);
    }

    /** The endpoint of slot {@code i}. */
    public Endpoint endpointAt(int i) {
        return endpoints.get(slots[i]);
    }

    /**
     * The table of these endpoints in {@code size} slots ({@code size} a prime above the endpoint
     * count; empty endpoints: no table).
     */
    public static MaglevTable of(List<Endpoint> endpoints, int size) {
        if (!isPrime(size)) {
            throw new IllegalArgumentException("a Maglev table's size must be a prime: " + size);
        }
        if (endpoints.size() > size) {
            throw new IllegalArgumentException(endpoints.size() + " endpoints do not fit " + size + " slots");
        }
        List<Endpoint> eps = new ArrayList<>(endpoints);
        // By name, then whole (an address and port listed twice, by two slices, in any order): every node the same.
        eps.sort(Comparator.comparing(MaglevTable::name).thenComparing(Endpoint::toString));
        int k = eps.size();
        int[] slots = new int[size];
        if (k == 0) {
            return new MaglevTable(size, eps, new int[0]);
        }
        long[] offset = new long[k];
        long[] skip = new long[k];
        for (int i = 0; i < k; i++) {
            byte[] name = name(eps.get(i)).getBytes(StandardCharsets.UTF_8);
            offset[i] = Long.remainderUnsigned(hash(name, OFFSET_SEED), size);
            skip[i] = Long.remainderUnsigned(hash(name, SKIP_SEED), size - 1) + 1;
        }
        Arrays.fill(slots, -1);
        long[] next = new long[k];
        int filled = 0;
        while (true) {
            for (int i = 0; i < k; i++) {
                int c = (int) ((offset[i] + next[i] * skip[i]) % size);
                while (slots[c] >= 0) {
                    next[i]++;
                    c = (int) ((offset[i] + next[i] * skip[i]) % size);
                }
                slots[c] = i;
                next[i]++;
                if (++filled == size) {
                    return new MaglevTable(size, eps, slots);
                }
            }
        }
    }

    /**
     * The table size for {@code count} endpoints: the smallest prime of at least {@link
     * #SLOTS_PER_ENDPOINT} slots for each of the most endpoints of the count's bucket (8, 16, 32
     * ...), so that an endpoint that comes or goes within the bucket keeps the size, and with it
     * the other endpoints' slots.
     */
    public static int sizeFor(int count) {
        if (count > MAX_ENDPOINTS) {
            throw new IllegalArgumentException(count + " endpoints: a Maglev table holds at most " + MAX_ENDPOINTS);
        }
        int bucket = 8;
        while (bucket < count) {
            bucket *= 2;
        }
        int n = SLOTS_PER_ENDPOINT * bucket + 1;
        while (!isPrime(n)) {
            n++;
        }
        return n;
    }

    static boolean isPrime(int n) {
        if (n < 2) {
            return false;
        }
        for (int d = 2; (long) d * d <= n; d++) {
            if (n % d == 0) {
                return false;
            }
        }
        return true;
    }

    /** An endpoint's name in the table: its address and port, as kube-proxy writes them. */
    static String name(Endpoint e) {
        return e.hostPort();
    }

    /** The two fixed seeds of an endpoint's offset and skip: changing either moves every client of every Maglev service. */
    static final long OFFSET_SEED = 0x6d61676c65762d31L; // "maglev-1"
    static final long SKIP_SEED = 0x6d61676c65762d32L;   // "maglev-2"

    /**
     * A 64-bit hash of {@code b} under {@code seed}: FNV-1a's loop, then SplitMix64's finalizer so
     * that names that differ in one digit land far apart. Fixed: every node must compute the same.
     */
    static long hash(byte[] b, long seed) {
        long h = 0xcbf29ce484222325L ^ seed;
        for (byte x : b) {
            h = (h ^ (x & 0xff)) * 0x100000001b3L;
        }
        h = (h ^ (h >>> 30)) * 0xbf58476d1ce4e5b9L;
        h = (h ^ (h >>> 27)) * 0x94d049bb133111ebL;
        return h ^ (h >>> 31);
    }
}
