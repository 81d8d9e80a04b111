package io.nftproxy.proxy;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock the test moves, for what is timed in virtual time. */
public final class ManualClock extends Clock {
    public Instant now = Instant.parse("2026-11-22T12:00:00Z");

    @Override
    public ZoneOffset getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return now;
    }
}
