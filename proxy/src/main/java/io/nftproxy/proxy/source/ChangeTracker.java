package io.nftproxy.proxy.source;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What changed since the last snapshot, as the sources reported it: which services to look at
 * again, whether this node changed, how many Service and EndpointSlice changes arrived, and the
 * endpoints controller's trigger times of the changed slices. It holds keys, not states: whether a
 * service really changed is decided at the snapshot by comparing its state then with the state
 * handed out before ({@link ServiceState#changed}), so an update that is undone before the sync
 * costs nothing. Not thread-safe: the store guards it.
 */
final class ChangeTracker {
    /** What a snapshot takes: the services to re-examine and the counts since the last one. */
    record Changes(Set<ObjectKey> services, boolean node, long serviceChanges, long endpointChanges,
                   List<ObjectStore.Trigger> triggerTimes) {
    }

    private Set<ObjectKey> services = new HashSet<>();
    private boolean node = true;
    private long serviceChanges;
    private long endpointChanges;
    private List<ObjectStore.Trigger> triggerTimes = new ArrayList<>();

    void service(ObjectKey service) {
        services.add(service);
        serviceChanges++;
    }

    /** A slice changed; {@code service} is the service it belongs (or belonged) to, null if none. */
    void slice(ObjectKey service, ObjectKey previousService, ObjectStore.Trigger triggerTime) {
        if (service != null) {
            services.add(service);
        }
        if (previousService != null) {
            services.add(previousService);
        }
        if (triggerTime != null) {
            triggerTimes.add(triggerTime);
        }
        endpointChanges++;
    }

    void node() {
        node = true;
    }

    /** Service and endpoint changes seen and not yet taken. */
    long[] pending() {
        return new long[] {serviceChanges, endpointChanges};
    }

    /** Everything since the last call, and starts over. */
    Changes take() {
        Changes c = new Changes(services, node, serviceChanges, endpointChanges, List.copyOf(triggerTimes));
        services = new HashSet<>();
        node = false;
        serviceChanges = 0;
        endpointChanges = 0;
        triggerTimes = new ArrayList<>();
        return c;
    }
}
