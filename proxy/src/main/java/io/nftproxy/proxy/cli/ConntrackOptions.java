package io.nftproxy.proxy.cli;

import java.time.Duration;

import io.nftproxy.proxy.config.Durations;
import io.nftproxy.proxy.config.KubeProxyConfiguration;
import picocli.CommandLine.Option;

/**
 * kube-proxy's {@code --conntrack-*} flags for {@code nftproxy run}: set at start as kube-proxy
 * sets them (its defaults, or the config file's conntrack section), in the network namespace the
 * proxy programs.
 */
final class ConntrackOptions {
    @Option(names = "--conntrack-max-per-core", paramLabel = "N", description = "nf_conntrack_max per CPU (0: leave it; default 32768).")
    Integer conntrackMaxPerCore;

    @Option(names = "--conntrack-min", paramLabel = "N", description = "The least nf_conntrack_max to set (default 131072).")
    Integer conntrackMin;

    @Option(names = "--conntrack-tcp-timeout-established", paramLabel = "D", description = "nf_conntrack_tcp_timeout_established (default 24h; 0: leave it).")
    String conntrackEstablished;

    @Option(names = "--conntrack-tcp-timeout-close-wait", paramLabel = "D", description = "nf_conntrack_tcp_timeout_close_wait (default 1h; 0: leave it).")
    String conntrackCloseWait;

    @Option(names = "--conntrack-tcp-be-liberal", arity = "0..1", fallbackValue = "true", paramLabel = "BOOL",
            description = "Set nf_conntrack_tcp_be_liberal (default false).")
    Boolean conntrackBeLiberal;

    @Option(names = "--conntrack-udp-timeout", paramLabel = "D", description = "nf_conntrack_udp_timeout (default: leave it).")
    String conntrackUdp;

    @Option(names = "--conntrack-udp-timeout-stream", paramLabel = "D", description = "nf_conntrack_udp_timeout_stream (default: leave it).")
    String conntrackUdpStream;

    /** The file's (or kube-proxy's default) conntrack settings with the flags given over them. */
    KubeProxyConfiguration.Conntrack over(KubeProxyConfiguration.Conntrack c) {
        return new KubeProxyConfiguration.Conntrack(
                conntrackMaxPerCore != null ? conntrackMaxPerCore : c.maxPerCore(),
                conntrackMin != null ? conntrackMin : c.min(),
                duration("--conntrack-tcp-timeout-established", conntrackEstablished, c.tcpEstablishedTimeout()),
                duration("--conntrack-tcp-timeout-close-wait", conntrackCloseWait, c.tcpCloseWaitTimeout()),
                conntrackBeLiberal != null ? conntrackBeLiberal : c.tcpBeLiberal(),
                duration("--conntrack-udp-timeout", conntrackUdp, c.udpTimeout()),
                duration("--conntrack-udp-timeout-stream", conntrackUdpStream, c.udpStreamTimeout()));
    }

    private static Duration duration(String flag, String given, Duration otherwise) {
        if (given == null) {
            return otherwise;
        }
        try {
            return Durations.parse(given);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + " '" + given + "': " + e.getMessage());
        }
    }
}
