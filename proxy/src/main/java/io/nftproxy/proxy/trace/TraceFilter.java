package io.nftproxy.proxy.trace;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.NfTablesUapi;
import io.nftproxy.netlink.nft.expr.Cmp;
import io.nftproxy.netlink.nft.expr.Expr;
import io.nftproxy.netlink.nft.expr.Immediate;
import io.nftproxy.netlink.nft.expr.Meta;
import io.nftproxy.netlink.nft.expr.Payload;
import io.nftproxy.proxy.model.IpFamily;
import io.nftproxy.proxy.model.Protocol;

/**
 * Which packets to trace: a source address, destinations (an address with an optional port, or a
 * port alone: a NodePort), a protocol; each null or empty when any will do. A pure description
 * that turns into the rules that mark the packets with {@code meta nftrace set 1}.
 */
public record TraceFilter(InetAddress source, List<Destination> destinations, Protocol protocol) {
    /** An address (null: any) and a port (0: any). */
    public record Destination(InetAddress address, int port) {
    }

    public TraceFilter {
        destinations = List.copyOf(destinations);
        if (protocol == null && destinations.stream().anyMatch(d -> d.port() != 0)) {
            // The destination port is read from the transport header: the protocol says there is one.
            throw new IllegalArgumentException("a destination port needs a protocol");
        }
    }

    /** Whether a family's packets can match (a source or every destination of the other family excludes it). */
    public boolean covers(IpFamily f) {
        if (source != null && !f.contains(source)) {
            return false;
        }
        return destinations.isEmpty() || destinations.stream().anyMatch(d -> d.address() == null || f.contains(d.address()));
    }

    /** The marking rules' expressions for one family: one rule per destination (or one for any). */
    public List<List<Expr>> rules(IpFamily f) {
        List<List<Expr>> out = new ArrayList<>();
        List<Destination> ds = destinations.isEmpty() ? List.of(new Destination(null, 0)) : destinations;
        for (Destination d : ds) {
            if (d.address() != null && !f.contains(d.address())) {
                continue;
            }
            List<Expr> r = new ArrayList<>();
            int addrLen = f.addressBytes();
            if (source != null) {
                r.add(Payload.network(NfTablesUapi.NFT_REG_1, f == IpFamily.V4 ? 12 : 8, addrLen));
                r.add(Cmp.eq(NfTablesUapi.NFT_REG_1, Bytes.ip(source)));
            }
            if (d.address() != null) {
                r.add(Payload.network(NfTablesUapi.NFT_REG_1, f == IpFamily.V4 ? 16 : 24, addrLen));
                r.add(Cmp.eq(NfTablesUapi.NFT_REG_1, Bytes.ip(d.address())));
            }
            if (protocol != null) {
                r.add(Meta.load(Meta.NFT_META_L4PROTO, NfTablesUapi.NFT_REG_1));
                r.add(Cmp.eq(NfTablesUapi.NFT_REG_1, Bytes.u8(protocol.number())));
            }
            if (d.port() != 0) {
                r.add(Payload.transport(NfTablesUapi.NFT_REG_1, 2, 2));
                r.add(Cmp.eq(NfTablesUapi.NFT_REG_1, Bytes.be16(d.port())));
            }
            r.add(Immediate.value(NfTablesUapi.NFT_REG_1, Bytes.u8(1)));
            r.add(Meta.store(Meta.NFT_META_NFTRACE, NfTablesUapi.NFT_REG_1));
            out.add(r);
        }
        return out;
    }
}
