package io.nftproxy.proxy.sync;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.nftproxy.netlink.nft.Chain;
import io.nftproxy.netlink.nft.NftObject;
import io.nftproxy.netlink.nft.Rule;
import io.nftproxy.netlink.nft.TransactionException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.nftproxy.proxy.model.Endpoint;
import io.nftproxy.proxy.model.ProxyState;
import io.nftproxy.proxy.model.ServicePort;
import io.nftproxy.proxy.model.ServicePortName;
import io.nftproxy.proxy.render.RenderFailure;

/**
 * The service ports a sync leaves out, with the inputs that were refused: the kernel refused
 * their objects, or the renderer failed on them (a defect must cost one service, not every sync).
 * Each is named in the log once, when it is left out, and tried again when its service or its
 * endpoints change; the rest of the sync goes on.
 */
final class Refusals {
    private static final Logger LOG = LoggerFactory.getLogger(Syncer.class);

    /** What a refused service port was rendered from: the service and its endpoints. */
    private record Refusal(ServicePort service, List<Endpoint> endpoints) {
        static Refusal of(ProxyState state, ServicePortName id) {
            return new Refusal(state.services().get(id), state.endpointsOf(id));
        }

        boolean standsIn(ProxyState state, ServicePortName id) {
            return service.equals(state.services().get(id)) && endpoints.equals(state.endpointsOf(id));
        }
    }

    private final Map<ServicePortName, Refusal> refused = new HashMap<>();

    /** Forgets the refusals of ports whose service or endpoints changed in {@code state}: they are tried again. */
    void retryChanged(ProxyState state) {
        refused.entrySet().removeIf(e -> !e.getValue().standsIn(state, e.getKey()));
    }

    /** Whether a port is left out as it is in the state being synced. */
    boolean leftOut(ServicePortName id) {
        return refused.containsKey(id);
    }

    /** The kernel refused a port's objects: left out until it changes, named in the log and in {@code rejected}. */
    void kernelRefused(ServicePortName id, ProxyState state, String reason, List<String> rejected) {
        LOG.atError().addKeyValue("service", id.namespace() + "/" + id.name())
                .addKeyValue("port", id.port()).addKeyValue("protocol", id.protocol())
                .log("the kernel refused the rules of service port {}; leaving it out until it changes: {}", id, reason);
        refused.put(id, Refusal.of(state, id));
        rejected.add(id + ": " + reason);
    }

    /** The renderer failed on a port's inputs: left out until they change, named in the log and in {@code rejected}. */
    void renderFailed(ServicePortName id, ProxyState state, RuntimeException e, List<String> rejected) {
        String reason = RenderFailure.describe(e);
        LOG.atError().addKeyValue("service", id.namespace() + "/" + id.name())
                .addKeyValue("port", id.port()).addKeyValue("protocol", id.protocol())
                .log("service port {} cannot be programmed; leaving it out until it changes: {}", id, reason);
        LOG.debug("rendering service port {} failed", id, e);
        refused.put(id, Refusal.of(state, id));
        rejected.add(id + ": " + reason);
    }

    /**
     * The service port whose chain the failing operation touched, if any: a chain this sync
     * rendered, or one we hold. Null for the globals' (no service to leave out) and for operations
     * on no chain.
     */
    static ServicePortName ownerOf(TransactionException e, Map<String, Contributor> renderedOwners, Committed committed) {
        if (e.operation() == null) {
            return null;
        }
        NftObject o = e.operation().object();
        // Named in the kernel's terms; we hold the renderer's.
        String chain = Generation.original(o instanceof Rule r ? r.chain() : o instanceof Chain c ? c.name() : null);
        if (chain == null) {
            return null;
        }
        Contributor owner = renderedOwners.get(chain);
        for (TableState ts : committed.tables().values()) {
            if (owner == null) {
                owner = ts.chainOwner.get(chain);
            }
        }
        return owner == null ? null : owner.port(); // the globals' port is null: no service to leave out
    }
}
