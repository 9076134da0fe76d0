package org.runjob.plan;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** Run ids: UTC start time to the second plus 4 hex digits, e.g. {@code 20261201-073501-1a2b}; sortable, unique enough per job. */
public final class RunId {

    private static final DateTimeFormatter FORMAT = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC);

    private RunId() {
    }

    public static String of(Instant start, int salt) {
        return FORMAT.format(start) + "-" + String.format("%04x", salt & 0xffff);
    }
}
