package io.nftproxy.proxy.render;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.nftproxy.proxy.model.LbAlgorithm;

/**
 * The name of one of our tables' objects, typed: what kind of object it is ({@link Scheme}),
 * and the tree, algorithm and numbers it carries. Every name with a number, a kind of frontend
 * or an algorithm in it is formatted here ({@link #text}) from its scheme's one template, and
 * every name of ours is read back here ({@link #parse}); the fixed names are {@link TableNames}'.
 * The classes that build the objects ({@link PickTree}, {@link StickyPick}, {@link MaglevPick},
 * {@link GlobalChains}, {@link Names}) ask for their names here, and what reads the kernel back
 * (the counters, the trace, {@code nftproxy dump}) reads them through those classes' typed
 * accessors, which parse here. A rename is a change of one template; {@code ObjectNameTest}
 * parses every name the renderer produces back to the value that formats it.
 *
 * <p>The predicates a sync asks of millions of names ({@link NftRenderer#isOnDemandSet}, {@link
 * PickTree#treeOfMap}) keep lookups that allocate nothing; the test holds them to what this
 * parse says of every name.
 */
public record ObjectName(Scheme scheme, PickTree.Kind tree, LbAlgorithm algorithm, List<Integer> numbers, String text) {

    /**
     * Every kind of name, by its template: {@code {tree}} is a pick tree's kind ({@link
     * PickTree.Kind#prefix}: {@code ip}, {@code nodeport}, {@code ip-local}, {@code
     * nodeport-local}), {@code {endpoints}} its endpoint maps' base, {@code {members}} its sticky
     * member sets' base, {@code {algorithm}} a hashed load-balancing algorithm's annotation value,
     * {@code {n}}, {@code {lo}}, {@code {hi}} numbers, {@code {rest}} any text (a service port's
     * name, a trace's tag). Written as docs/ruleset.md shows them.
     */
    public enum Scheme {
        /** One of the names every table has or may have ({@link TableNames}). */
        FIXED("{fixed}", false),
        /** The set of a tree's frontends whose endpoint count minus one has bit n set. */
        COUNT_BIT("{tree}-count-bit-{n}", false),
        /** The set of a tree's frontends whose count is in block n (1: 129 to 256). */
        COUNT_BLOCK("{tree}-count-block-{n}", true),
        /** A chain of a tree that still tells counts lo to hi apart (the root: 1 to 128). */
        PICK("{tree}-pick-{lo}-{hi}", false),
        /** The map from "frontend . index" to endpoint of the counts lo to hi. */
        ENDPOINTS("{endpoints}-{lo}-{hi}", true),
        /** The set the kernel writes a tree's remembered clients into. */
        AFFINITY("{tree}-affinity", false),
        /** "frontend . endpoint" of every sticky port's endpoint of a tree. */
        STICKY_PAIRS("{tree}-sticky-pairs", false),
        /** The pairs whose endpoint's number has bit n set. */
        STICKY_ID_BIT("{tree}-sticky-id-bit-{n}", false),
        /** Where a tree's root sends its sticky frontends. */
        STICKY_CHECK("{tree}-sticky-check", false),
        /** The check of the sticky frontends of numbers lo to hi. */
        STICKY_RANGE_CHECK("{tree}-sticky-check-{lo}-{hi}", false),
        /** The chain that checks a client remembered by number n, in the range lo to hi. */
        STICKY_SLOT("{tree}-sticky-{lo}-{hi}-slot-{n}", false),
        /** "frontend . number" to endpoint, for the numbers of the range lo to hi. */
        STICKY_ENDPOINTS("{tree}-sticky-endpoints-{lo}-{hi}", false),
        /** A chain of the tree that remembers a new client by its endpoint's number, still telling lo to hi apart. */
        STICKY_REMEMBER("{tree}-sticky-remember-{lo}-{hi}", false),
        /** A tree's frontends with ClientIP affinity, of any timeout. */
        STICKY_MEMBERS_ALL("{members}", false),
        /** A tree's frontends with ClientIP affinity of n seconds. */
        STICKY_MEMBERS("{members}-{n}", false),
        /** A tree's sticky frontends whose endpoints' numbers are in the range lo to hi. */
        STICKY_RANGE_MEMBERS("{members}-ids-{lo}-{hi}", true),
        /** The map from "frontend . slot" to endpoint of a hashed pick's tables of n slots. */
        HASHED_SLOTS("{tree}-{algorithm}-slots-{n}", true),
        /** The chain that hashes a client into those tables. */
        HASHED_CHAIN("{tree}-{algorithm}-{n}", false),
        /** The source ranges of the load-balancer IPs of shard n. */
        FIREWALL_ALLOW(TableNames.FIREWALL_ALLOW + "{n}", true),
        /** The chain of shard n. */
        FIREWALL_SHARD(TableNames.FIREWALL_SHARD + "{n}", false),
        /** A service port's chain that picks among all its endpoints. */
        CLUSTER_CHAIN(Names.CLUSTER + "{rest}", false),
        /** A service port's chain that picks among this node's endpoints. */
        LOCAL_CHAIN(Names.LOCAL + "{rest}", false),
        /** A service port's chain for the external traffic of policy Local. */
        EXTERNAL_CHAIN(Names.EXTERNAL + "{rest}", false),
        /** A marking chain {@code nftproxy trace} adds for a while. */
        TRACE_CHAIN(Names.TRACE + "{rest}", false);

        final String template;
        /** A set the globals declare only while some service fills it. */
        final boolean onDemand;
        /** The template cut at its placeholders: literals[i], then holes[i], ..., then the last literal. */
        private final String[] literals;
        private final String[] holes;
        /** The numbers' placeholders in the template's order. */
        private final List<String> numberNames;
        private final Pattern pattern;

        Scheme(String template, boolean onDemand) {
            this.template = template;
            this.onDemand = onDemand;
            List<String> lits = new ArrayList<>();
            List<String> hs = new ArrayList<>();
            Matcher m = Pattern.compile("\\{([a-z]+)}").matcher(template);
            int at = 0;
            while (m.find()) {
                lits.add(template.substring(at, m.start()));
                hs.add(m.group(1));
                at = m.end();
            }
            lits.add(template.substring(at));
            this.literals = lits.toArray(String[]::new);
            this.holes = hs.toArray(String[]::new);
            this.numberNames = hs.stream().filter(h -> h.equals("n") || h.equals("lo") || h.equals("hi")).toList();
            StringBuilder re = new StringBuilder(Pattern.quote(literals[0]));
            for (int i = 0; i < holes.length; i++) {
                re.append(switch (holes[i]) {
                    case "n", "lo", "hi" -> "([0-9]{1,9})";
                    case "tree" -> "(" + alternatives(Arrays.stream(PickTree.Kind.values()).map(k -> k.prefix)) + ")";
                    case "endpoints" -> "(" + alternatives(Arrays.stream(PickTree.Kind.values()).map(PickTree.Kind::endpointsBase)) + ")";
                    case "members" -> "(" + alternatives(Arrays.stream(PickTree.Kind.values()).map(ObjectName::membersBase)) + ")";
                    case "algorithm" -> "(" + alternatives(Arrays.stream(LbAlgorithm.values()).filter(LbAlgorithm::hashed)
                            .map(LbAlgorithm::value)) + ")";
                    case "rest", "fixed" -> "(.+)";
                    default -> throw new AssertionError("no such placeholder in " + template + ": " + holes[i]);
                }).append(Pattern.quote(literals[i + 1]));
            }
            this.pattern = Pattern.compile(re.toString());
        }

        private static String alternatives(Stream<String> words) {
            // the longest first: "ip-local" before "ip"
            return words.sorted((a, b) -> b.length() - a.length()).map(Pattern::quote).collect(Collectors.joining("|"));
        }
    }

    public ObjectName {
        numbers = List.copyOf(numbers);
    }

    /** What the names of a tree's sticky member sets start with: {@code sticky-ips}, {@code sticky-local-nodeports}. */
    static String membersBase(PickTree.Kind kind) {
        return "sticky-" + (kind.local ? "local-" : "") + (kind.ip ? "ips" : "nodeports");
    }

    /** The name of scheme {@code s} of {@code tree} (null where the scheme has none) with these numbers, in the template's order. */
    static String format(Scheme s, PickTree.Kind tree, LbAlgorithm algorithm, String rest, int... numbers) {
        if (numbers.length != s.numberNames.size()) {
            throw new IllegalArgumentException(s + " takes " + s.numberNames + ", not " + numbers.length + " numbers");
        }
        StringBuilder out = new StringBuilder(s.template.length() + 16).append(s.literals[0]);
        int number = 0;
        for (int i = 0; i < s.holes.length; i++) {
            switch (s.holes[i]) {
                case "n", "lo", "hi" -> out.append(numbers[number++]);
                case "tree" -> out.append(tree.prefix);
                case "endpoints" -> out.append(tree.endpointsBase());
                case "members" -> out.append(membersBase(tree));
                case "algorithm" -> out.append(hashedValue(algorithm));
                default -> out.append(rest);
            }
            out.append(s.literals[i + 1]);
        }
        return out.toString();
    }

    private static String hashedValue(LbAlgorithm a) {
        if (!a.hashed()) {
            throw new IllegalArgumentException("a random pick has no table");
        }
        return a.value();
    }

    /** The number of placeholder {@code {n}}; -1 where the scheme has none. */
    public int n() {
        return number("n");
    }

    /** The lowest count or number of the range the name is of; -1 where the scheme has none. */
    public int lo() {
        return number("lo");
    }

    /** The highest count or number of the range; -1 where the scheme has none. */
    public int hi() {
        return number("hi");
    }

    private int number(String placeholder) {
        int i = scheme.numberNames.indexOf(placeholder);
        return i < 0 ? -1 : numbers.get(i);
    }

    /** What {@code {rest}} stands for in a service port's or a trace's chain; null for other schemes. */
    public String rest() {
        return scheme.holes.length == 1 && scheme.holes[0].equals("rest") ? text.substring(scheme.literals[0].length()) : null;
    }

    /** Whether this is a set the globals declare only while some service fills it ({@link NftRenderer#isOnDemandSet}). */
    public boolean onDemand() {
        return scheme.onDemand || scheme == Scheme.FIXED && ON_DEMAND_FIXED.contains(text);
    }

    /** The fixed names a service's element brings into the globals: verdict maps to services with chains of their own. */
    private static final Set<String> ON_DEMAND_FIXED = Set.of(TableNames.SERVICE_CHAINS, TableNames.NODEPORT_CHAINS,
            TableNames.IP_EXTERNAL_LOCAL_BLOCKS, TableNames.NODEPORT_EXTERNAL_LOCAL_BLOCKS);

    /**
     * {@code name} as the value that formats it, or null when no object of ours is so named (the
     * generation suffix a table built beside another adds, {@code .g1}, taken off first by who
     * reads such a table).
     */
    public static ObjectName parse(String name) {
        if (name == null || name.isEmpty()) {
            return null;
        }
        if (TableNames.FIXED.contains(name)) {
            return new ObjectName(Scheme.FIXED, null, null, List.of(), name);
        }
        for (Scheme s : Scheme.values()) {
            if (s == Scheme.FIXED) {
                continue;
            }
            Matcher m = s.pattern.matcher(name);
            if (!m.matches()) {
                continue;
            }
            ObjectName read = read(s, m);
            if (read != null && read.text.equals(name)) {
                return read;
            }
        }
        return null;
    }

    private static ObjectName read(Scheme s, Matcher m) {
        PickTree.Kind tree = null;
        LbAlgorithm algorithm = null;
        String rest = null;
        List<Integer> numbers = new ArrayList<>();
        for (int i = 0; i < s.holes.length; i++) {
            String value = m.group(i + 1);
            switch (s.holes[i]) {
                case "n", "lo", "hi" -> numbers.add(Integer.parseInt(value));
                case "tree" -> tree = kindWhere(k -> k.prefix.equals(value));
                case "endpoints" -> tree = kindWhere(k -> k.endpointsBase().equals(value));
                case "members" -> tree = kindWhere(k -> membersBase(k).equals(value));
                case "algorithm" -> algorithm = LbAlgorithm.of(value);
                default -> rest = value;
            }
        }
        if ((s == Scheme.HASHED_SLOTS || s == Scheme.HASHED_CHAIN) && (tree == null || tree.local)) {
            return null; // hashed picks are of the cluster's endpoints only
        }
        int[] n = numbers.stream().mapToInt(Integer::intValue).toArray();
        return new ObjectName(s, tree, algorithm, numbers, format(s, tree, algorithm, rest, n));
    }

    private static PickTree.Kind kindWhere(java.util.function.Predicate<PickTree.Kind> p) {
        for (PickTree.Kind k : PickTree.Kind.values()) {
            if (p.test(k)) {
                return k;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return text;
    }
}
