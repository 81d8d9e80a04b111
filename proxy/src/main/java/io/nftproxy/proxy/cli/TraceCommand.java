package io.nftproxy.proxy.cli;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import io.nftproxy.proxy.config.Durations;
import io.nftproxy.netlink.nft.Inet;
import io.nftproxy.netlink.nft.client.NftClient;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.Protocol;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.source.ObjectStore;
import io.nftproxy.proxy.source.Source;
import io.nftproxy.proxy.trace.KernelServiceNames;
import io.nftproxy.proxy.trace.TraceExplainer;
import io.nftproxy.proxy.trace.TraceFilter;
import io.nftproxy.proxy.trace.Tracer;

/** Traces packets through our rules and says what became of them, in the proxy's terms. */
@Command(name = "trace", mixinStandardHelpOptions = true,
        description = {"Trace packets through our nf_tables rules: where each entered, every rule of ours it went through,"
                + " the verdicts, and the outcome (service, endpoint, masquerade, or why it was refused).",
                "Marks matching packets with a temporary chain in our table, removed when the command ends (also on Ctrl-C)."})
final class TraceCommand implements Callable<Integer> {
    @Mixin
    NetnsOption ns = new NetnsOption();

    @Option(names = "--source", paramLabel = "IP", description = "Only packets from this address.")
    String source;

    @Option(names = "--destination", paramLabel = "IP|NAMESPACE/NAME",
            description = "Only packets to this address, or to any frontend of this service (found from --manifests or --kubeconfig, or else from the comments of our elements in the kernel).")
    String destination;

    @Option(names = "--port", paramLabel = "N", description = "Only packets to this port (with a service: its port or NodePort).")
    Integer port;

    @Option(names = "--protocol", paramLabel = "tcp|udp|sctp", description = "Only this protocol (default with --port: tcp).")
    String protocol;

    @Option(names = "--count", defaultValue = "1", description = "Packets to trace (default: ${DEFAULT-VALUE}).")
    int count;

    @Option(names = "--timeout", defaultValue = "60s", description = "Give up after this long (default: ${DEFAULT-VALUE}).")
    String timeout;

    /** Optional: the services, to name them in the outcome and to trace one by name. */
    @Mixin
    SourceOptions sources = new SourceOptions();

    @Option(names = "--hostname-override", paramLabel = "NAME", description = "This node's name (for the services' model).")
    String hostname;

    @Option(names = "--masquerade-bit", defaultValue = "14", description = "The mark bit nftproxy masquerades by (default: ${DEFAULT-VALUE}).")
    int masqueradeBit;

    @Override
    public Integer call() throws Exception {
        Protocol proto = protocol == null ? null : Protocol.parse(protocol.toUpperCase(Locale.ROOT));
        ProxyState state = model();
        List<TraceFilter.Destination> dests = new ArrayList<>();
        if (destination != null && destination.contains("/") && state == null) {
            // No source: the service's frontends as our elements' comments name them in the kernel.
            try (NftClient client = NftClient.open(ns.namespace())) {
                for (KernelServiceNames.Frontend fe : new KernelServiceNames(client, ns.table).frontendsOf(destination)) {
                    if (proto != null && fe.protocol() != proto || port != null && port != fe.port()) {
                        continue;
                    }
                    proto = proto == null ? fe.protocol() : proto;
                    if (fe.protocol() == proto) {
                        dests.add(new TraceFilter.Destination(fe.address(), fe.port()));
                    }
                }
            }
            if (dests.isEmpty()) {
                System.err.println("nftproxy: no service port of " + destination + " is in table " + ns.table
                        + " (give --manifests DIR or --kubeconfig PATH to name services from them)");
                return 2;
            }
        } else if (destination != null && destination.contains("/")) {
            String[] nn = destination.split("/", 2);
            for (ServicePort s : state.sortedServices()) {
                if (!s.id().namespace().equals(nn[0]) || !s.id().name().equals(nn[1])
                        || proto != null && s.protocol() != proto
                        || port != null && port != s.port() && port != s.nodePort()) {
                    continue;
                }
                if (proto == null) {
                    proto = s.protocol();
                }
                for (IpFamily f : IpFamily.values()) {
                    List<InetAddress> front = new ArrayList<>(s.clusterIPs(f));
                    front.addAll(s.externalIPs(f));
                    front.addAll(s.loadBalancerIPs(f));
                    front.forEach(a -> dests.add(new TraceFilter.Destination(a, s.port())));
                }
                if (s.nodePort() != 0) {
                    dests.add(new TraceFilter.Destination(null, s.nodePort()));
                }
            }
            if (dests.isEmpty()) {
                System.err.println("nftproxy: no service port of " + destination + " matches");
                return 2;
            }
        } else if (destination != null || port != null) {
            if (port != null && proto == null) {
                proto = Protocol.TCP;
            }
            dests.add(new TraceFilter.Destination(destination == null ? null : Inet.parse(destination), port == null ? 0 : port));
        }
        TraceFilter filter = new TraceFilter(source == null ? null : Inet.parse(source), dests, proto);
        System.err.println("tracing " + count + " packet" + (count == 1 ? "" : "s") + (ns.netns == null ? "" : " in " + ns.netns)
                + " for at most " + timeout + " ...");
        List<TraceExplainer.Explanation> seen = new Tracer(ns.namespace(), ns.table, 1 << masqueradeBit)
                .run(filter, state, count, Durations.parse(timeout), () -> { }, e -> System.out.println(e + "\n"));
        if (seen.isEmpty()) {
            System.err.println("nftproxy: no matching packet within " + timeout);
            return 1;
        }
        return 0;
    }

    /** The services, when a source for them was given; null otherwise. */
    private ProxyState model() throws Exception {
        if (sources.given() == 0) {
            return null;
        }
        ObjectStore store = new ObjectStore(hostname != null ? hostname : InetAddress.getLocalHost().getHostName());
        try (Source src = sources.open(store)) {
            SourceOptions.readOnce(src); // the snapshot below is what it read
        }
        return store.snapshot().state();
    }
}
