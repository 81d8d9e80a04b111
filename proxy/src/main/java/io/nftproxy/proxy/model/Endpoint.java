package io.nftproxy.proxy.model;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Objects;
import java.util.Set;

import io.nftproxy.netlink.nft.Bytes;
import io.nftproxy.netlink.nft.Inet;

/**
 * One endpoint of a service port, from an EndpointSlice. {@code zoneHints} ({@code hints.forZones})
 * and {@code nodeHints} ({@code hints.forNodes}, for trafficDistribution PreferSameNode) are null
 * when the slice gave none for it.
 *
 * <p>A value with the accessors of a record, but not one: the address is held as its bytes (an
 * IPv4 address in an int of the object itself) and {@link #address()} makes an
 * {@code InetAddress} when asked. A cluster's endpoints are the most numerous objects the proxy
 * holds (a million at 100,000 services), and an {@code InetAddress} with its holder took 56
 * bytes more each than the endpoint itself: 60 MB of the daemon's live heap at that size.
 */
public final class Endpoint {
    /** Held for an endpoint made without an address: the record this was allowed it, and tests inject faults so. */
    private static final byte[] NONE = new byte[0];

    private final int v4;
    /** The 16 bytes of an IPv6 address; null for IPv4 (held in {@link #v4}); {@link #NONE} for none. */
    private final byte[] v6;
    /**
     * The port (16 bits) and the three conditions above it: three booleans beside an int made the
     * object 48 bytes, packed it is 40 (a million endpoints at 100,000 services: 8 MB).
     */
    private final int portAndConditions;
    private static final int READY = 1 << 16;
    private static final int SERVING = 1 << 17;
    private static final int TERMINATING = 1 << 18;
    private final String nodeName;
    private final String zone;
    private final Set<String> zoneHints;
    private final Set<String> nodeHints;

    private Endpoint(InetAddress address, int port, String nodeName, String zone, boolean ready, boolean serving,
                     boolean terminating, Set<String> zoneHints, Set<String> nodeHints) {
        byte[] b = address == null ? NONE : address.getAddress();
        if (address == null) {
            this.v4 = 0;
            this.v6 = NONE;
        } else if (address instanceof Inet4Address) {
            this.v4 = (b[0] & 0xff) << 24 | (b[1] & 0xff) << 16 | (b[2] & 0xff) << 8 | (b[3] & 0xff);
            this.v6 = null;
        } else {
            this.v4 = 0;
            this.v6 = b;
        }
        this.portAndConditions = checkedPort(port) | (ready ? READY : 0) | (serving ? SERVING : 0)
                | (terminating ? TERMINATING : 0);
        this.nodeName = nodeName;
        this.zone = zone;
        this.zoneHints = zoneHints == null ? null : Set.copyOf(zoneHints);
        this.nodeHints = nodeHints == null ? null : Set.copyOf(nodeHints);
    }

    private Endpoint(Endpoint e, int port) {
        this.v4 = e.v4;
        this.v6 = e.v6;
        this.portAndConditions = checkedPort(port) | (e.portAndConditions & ~0xffff);
        this.nodeName = e.nodeName;
        this.zone = e.zone;
        this.zoneHints = e.zoneHints;
        this.nodeHints = e.nodeHints;
    }

    /** A ready (and so serving) endpoint on {@code nodeName}, without zone or hints. */
    public static Endpoint ready(InetAddress address, int port, String nodeName) {
        return builder(address, port).node(nodeName).build();
    }

    /**
     * An endpoint with each of its conditions and hints named as it is set: ready and serving
     * and not terminating unless said (as a slice's conditions left out read, and kube-proxy
     * reads them), no node, zone or hints unless given.
     */
    public static Builder builder(InetAddress address, int port) {
        return new Builder(address, port);
    }

    /** Names an endpoint's conditions where three booleans by position would not. */
    public static final class Builder {
        private final InetAddress address;
        private final int port;
        private String nodeName;
        private String zone;
        private boolean ready = true;
        private boolean serving = true;
        private boolean terminating;
        private Set<String> zoneHints;
        private Set<String> nodeHints;

        private Builder(InetAddress address, int port) {
            this.address = address;
            this.port = port;
        }

        public Builder node(String v) {
            nodeName = v;
            return this;
        }

        public Builder zone(String v) {
            zone = v;
            return this;
        }

        public Builder ready(boolean v) {
            ready = v;
            return this;
        }

        public Builder serving(boolean v) {
            serving = v;
            return this;
        }

        public Builder terminating(boolean v) {
            terminating = v;
            return this;
        }

        /** {@code hints.forZones}; null: the slice gave none. */
        public Builder zoneHints(Set<String> v) {
            zoneHints = v;
            return this;
        }

        /** {@code hints.forNodes}; null: the slice gave none. */
        public Builder nodeHints(Set<String> v) {
            nodeHints = v;
            return this;
        }

        /** The endpoint; a port outside 0..65535 is refused. */
        public Endpoint build() {
            return new Endpoint(address, port, nodeName, zone, ready, serving, terminating, zoneHints, nodeHints);
        }
    }

    /** The same endpoint on another port (a slice's endpoints serve each of its ports). */
    public Endpoint withPort(int p) {
        return new Endpoint(this, p);
    }

    /** The address, made anew for each call (see the class comment). */
    public InetAddress address() {
        if (v6 == NONE) {
            return null;
        }
        try {
            return InetAddress.getByAddress(addressBytes());
        } catch (UnknownHostException e) {
            throw new IllegalStateException("4 or 16 bytes are an IP address", e);
        }
    }

    /** The address in network order: 4 bytes or 16, a new array for each call. */
    public byte[] addressBytes() {
        if (v6 == NONE) {
            throw new NullPointerException("an endpoint without an address");
        }
        return v6 != null ? v6.clone() : new byte[] {(byte) (v4 >>> 24), (byte) (v4 >>> 16), (byte) (v4 >>> 8), (byte) v4};
    }

    /** The address as the bytes of a set element's key. */
    public Bytes ip() {
        if (v6 == null) {
            return Bytes.be32(v4);
        }
        return Bytes.of(v6 == NONE ? addressBytes() : v6); // none: the same exception as addressBytes
    }

    private static int checkedPort(int port) {
        if (port < 0 || port > 0xffff) {
            throw new IllegalArgumentException("port " + port + " is not a port number");
        }
        return port;
    }

    public int port() {
        return portAndConditions & 0xffff;
    }

    public String nodeName() {
        return nodeName;
    }

    public String zone() {
        return zone;
    }

    public boolean ready() {
        return (portAndConditions & READY) != 0;
    }

    public boolean serving() {
        return (portAndConditions & SERVING) != 0;
    }

    public boolean terminating() {
        return (portAndConditions & TERMINATING) != 0;
    }

    public Set<String> zoneHints() {
        return zoneHints;
    }

    public Set<String> nodeHints() {
        return nodeHints;
    }

    public boolean isLocal(String node) {
        return nodeName != null && nodeName.equals(node);
    }

    public IpFamily family() {
        return v6 == null ? IpFamily.V4 : IpFamily.V6; // none: V6, as IpFamily.of(null)
    }

    /** What makes two endpoints the same one, whatever their state: address and port. */
    public record AddressPort(Bytes ip, int port) {
    }

    /** The key of this endpoint in a map of endpoints by address and port. */
    public AddressPort addressPort() {
        return new AddressPort(v6 == NONE ? null : ip(), port());
    }

    /** Whether the two have the same address (ports and the rest aside). */
    public boolean sameAddress(Endpoint o) {
        return v4 == o.v4 && Arrays.equals(v6, o.v6);
    }

    /** "ip:port" with IPv6 in brackets. */
    public String hostPort() {
        String a = Inet.format(address());
        return (family() == IpFamily.V6 ? "[" + a + "]" : a) + ":" + port();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Endpoint e && sameAddress(e) && portAndConditions == e.portAndConditions
                && Objects.equals(nodeName, e.nodeName) && Objects.equals(zone, e.zone)
                && Objects.equals(zoneHints, e.zoneHints) && Objects.equals(nodeHints, e.nodeHints);
    }

    @Override
    public int hashCode() {
        int h = v6 == null ? v4 : Arrays.hashCode(v6);
        h = 31 * h + port();
        h = 31 * h + Objects.hashCode(nodeName);
        h = 31 * h + Objects.hashCode(zone);
        h = 31 * h + (ready() ? 1 : 0) + (serving() ? 2 : 0) + (terminating() ? 4 : 0);
        h = 31 * h + Objects.hashCode(zoneHints);
        return 31 * h + Objects.hashCode(nodeHints);
    }

    @Override
    public String toString() {
        return "Endpoint[address=" + (v6 == NONE ? null : Inet.format(address())) + ", port=" + port() + ", nodeName=" + nodeName + ", zone=" + zone
                + ", ready=" + ready() + ", serving=" + serving() + ", terminating=" + terminating() + ", zoneHints=" + zoneHints
                + ", nodeHints=" + nodeHints + "]";
    }
}
