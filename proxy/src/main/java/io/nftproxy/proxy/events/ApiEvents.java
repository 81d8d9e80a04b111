package io.nftproxy.proxy.events;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.fabric8.kubernetes.api.model.MicroTime;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.api.model.events.v1.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Events recorded in the API server as kube-proxy records them (events.k8s.io/v1, as client-go's
 * event broadcaster writes them): named after the object and the time, in the object's namespace
 * (default for a Node), regarding the object with its name as UID as kube-proxy's references
 * have it. They are sent from one thread of their own, so a caller never waits for an API server
 * that is away; at most 64 wait, more are dropped (an event is a courtesy, the log line beside it
 * says the same).
 */
public final class ApiEvents implements EventRecorder, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ApiEvents.class);
    private final KubernetesClient client;
    private final String controller;
    private final String instance;
    private final ThreadPoolExecutor sender = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(64), r -> {
                Thread t = new Thread(r, "events");
                t.setDaemon(true);
                return t;
            }, new ThreadPoolExecutor.DiscardPolicy());

    /** @param instance this reporter's name (the node's), as reportingInstance {@code controller-instance} */
    public ApiEvents(KubernetesClient client, String controller, String instance) {
        this.client = client;
        this.controller = controller;
        this.instance = controller + "-" + instance;
    }

    /** The event as it is sent: a pure function of what is recorded and when. */
    public Event event(Regarding about, Type type, String reason, String action, String note, Instant now) {
        String namespace = about.namespace().isEmpty() ? "default" : about.namespace();
        Instant micros = now.truncatedTo(ChronoUnit.MICROS);
        long nanos = micros.getEpochSecond() * 1_000_000_000L + micros.getNano();
        EventBuilder b = new EventBuilder()
                .withNewMetadata().withName(about.name() + "." + Long.toHexString(nanos)).withNamespace(namespace).endMetadata()
                .withNewRegarding().withKind(about.kind()).withApiVersion("v1").withName(about.name())
                .withUid(about.namespace().isEmpty() ? about.name() : about.namespace() + "/" + about.name()).endRegarding()
                .withType(type.api()).withReason(reason).withAction(action).withNote(note)
                .withReportingController(controller).withReportingInstance(instance)
                .withEventTime(new MicroTime(micros.toString()));
        if (!about.namespace().isEmpty()) {
            b.editRegarding().withNamespace(about.namespace()).endRegarding();
        }
        return b.build();
    }

    @Override
    public void record(Regarding about, Type type, String reason, String action, String note) {
        Event e = event(about, type, reason, action, note, Instant.now());
        sender.execute(() -> {
            try {
                client.events().v1().events().inNamespace(e.getMetadata().getNamespace()).resource(e).create();
            } catch (RuntimeException ex) {
                LOG.warn("could not record the {} event on {} {}: {}", reason, about.kind(), about.name(),
                        ex.getMessage() == null ? ex.getClass().getSimpleName() : ex.getMessage().lines().findFirst().orElse(""));
            }
        });
    }

    /** Sends what is waiting (for at most 3 s: an API server away does not hold a stopping proxy). */
    @Override
    public void close() {
        sender.shutdown();
        try {
            sender.awaitTermination(3, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sender.shutdownNow();
    }
}
