package io.nftproxy.proxy.trace;

import java.net.NetworkInterface;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import io.nftproxy.ffi.NetNamespace;
import io.nftproxy.netlink.ct.ConntrackClient;
import io.nftproxy.netlink.ct.ConntrackEntry;
import io.nftproxy.netlink.nft.Family;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.netlink.nft.NftException;
import io.nftproxy.netlink.nft.print.NftPrinter;
import io.nftproxy.netlink.nft.NftSet;
import io.nftproxy.netlink.nft.NftTrace;
import io.nftproxy.netlink.nft.monitor.NftTraceMonitor;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.ProxyState;

/**
 * Traces packets through our tables: subscribes to the trace events, installs the marking chains,
 * groups the events by packet, and explains each packet once its events stop coming. Rules are
 * read back from the kernel by chain, only for the chains a trace went through.
 */
public final class Tracer {
    /** A packet's events are complete when none came for this long. */
    static final Duration QUIET = Duration.ofMillis(300);

    private final NetNamespace ns;
    private final String table;
    private final int masqueradeMark;
    private final Map<String, Map<Long, String>> ruleTexts = new HashMap<>();
    private final Map<Family, Map<String, NftSet>> sets = new HashMap<>();

    public Tracer(NetNamespace ns, String table, int masqueradeMark) {
        this.ns = ns;
        this.table = table;
        this.masqueradeMark = masqueradeMark;
    }

    /**
     * Traces until {@code count} packets were explained or {@code timeout} passed; each
     * explanation goes to {@code out} as it is ready. The marking chains are gone when this returns
     * (also when it throws); {@code started} runs once they are in place.
     */
    public List<TraceExplainer.Explanation> run(TraceFilter filter, ProxyState state, int count, Duration timeout,
                                                Runnable started, Consumer<TraceExplainer.Explanation> out)
            throws NftException {
        List<TraceExplainer.Explanation> done = new ArrayList<>();
        try (NftClient client = NftClient.open(ns); NftTraceMonitor monitor = NftTraceMonitor.open(ns);
             ConntrackClient conntrack = ConntrackClient.open(ns)) {
            KernelServiceNames names = new KernelServiceNames(client, table);
            TraceExplainer explainer = new TraceExplainer(table, (f, chain, handle) -> ruleText(client, f, chain, handle),
                    this::interfaceName, masqueradeMark, names::describe);
            TraceSession session = TraceSession.open(client, table, filter);
            Thread hook = new Thread(() -> {
                try {
                    session.close();
                } catch (NftException e) {
                    System.err.println("nftproxy: removing the trace chains: " + e.getMessage());
                }
            }, "trace-cleanup");
            Runtime.getRuntime().addShutdownHook(hook); // Ctrl-C: the chains go too
            try {
                started.run();
                Map<Long, List<NftTrace>> open = new LinkedHashMap<>();
                Map<Long, Long> lastSeen = new HashMap<>();
                long deadline = System.nanoTime() + timeout.toNanos();
                while (done.size() < count) {
                    long now = System.nanoTime();
                    if (now >= deadline && open.isEmpty()) {
                        break;
                    }
                    NftTrace t = monitor.next(QUIET.dividedBy(3));
                    now = System.nanoTime();
                    boolean marking = t != null && session.chainNames().contains(t.chain()) && t.ruleHandle() != 0;
                    if (marking && open.containsKey(t.id())) {
                        // The kernel numbers traces by flow: the next packet of a connection comes under
                        // the same id. Our marking rule starts every packet: the one before is complete.
                        explain(explainer, conntrack, state, open.remove(t.id()), done, out);
                    }
                    if (t != null && (open.containsKey(t.id()) || marking)) {
                        open.computeIfAbsent(t.id(), k -> new ArrayList<>()).add(t);
                        lastSeen.put(t.id(), now);
                    }
                    for (Long id : new ArrayList<>(open.keySet())) {
                        if (done.size() < count && (now - lastSeen.get(id) >= QUIET.toNanos() || now >= deadline)) {
                            explain(explainer, conntrack, state, open.remove(id), done, out);
                        }
                    }
                }
            } finally {
                session.close();
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // the hook is running or has run: the chains are gone either way
                }
            }
        }
        return done;
    }

    private static void explain(TraceExplainer explainer, ConntrackClient conntrack, ProxyState state, List<NftTrace> events,
                                List<TraceExplainer.Explanation> done, Consumer<TraceExplainer.Explanation> out) {
        TraceExplainer.Explanation e = explainer.explain(events, state, connection(conntrack, events));
        done.add(e);
        out.accept(e);
    }

    private String ruleText(NftClient client, Family f, String chain, long handle) {
        Map<Long, String> texts = ruleTexts.computeIfAbsent(f.keyword() + " " + chain, k -> {
            Map<Long, String> m = new HashMap<>();
            try {
                Map<String, NftSet> byName = sets.computeIfAbsent(f, x -> new HashMap<>());
                if (byName.isEmpty()) {
                    client.listSets(f, table).forEach(s -> byName.put(s.name(), s));
                }
                for (Rule r : client.listRules(f, table, chain)) {
                    m.put(r.handle(), NftPrinter.ruleBody(r, byName::get));
                }
            } catch (NftException e) {
                // the chain is gone (a sync replaced it): the explainer says so
            }
            return m;
        });
        return texts.get(handle);
    }

    private String interfaceName(int index) {
        try {
            NetNamespace.IoCallable<String> lookup = () -> {
                NetworkInterface i = NetworkInterface.getByIndex(index);
                return i == null ? null : i.getName();
            };
            return ns == null ? lookup.call() : ns.call(lookup);
        } catch (Exception e) {
            return null; // printed as its index
        }
    }

    /** The connection the packet opened (or belongs to), as conntrack holds it now; null when none. */
    private static ConntrackEntry connection(ConntrackClient conntrack, List<NftTrace> events) {
        TracedPacket p = TracedPacket.of(events.get(0).network(), events.get(0).transport());
        if (p == null) {
            return null;
        }
        try {
            for (ConntrackEntry e : conntrack.list(IpFamily.of(p.destination()) == IpFamily.V4 ? 4 : 6)) {
                if (e.protocol() == p.protocol() && e.origSrc().equals(p.source()) && e.origDst().equals(p.destination())
                        && e.origSport() == p.sourcePort() && e.origDport() == p.destinationPort()) {
                    return e;
                }
            }
        } catch (NftException e) {
            return null;
        }
        return null;
    }
}
