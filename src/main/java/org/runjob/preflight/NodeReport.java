package org.runjob.preflight;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/** Every check of one node, and the interface its route to MASTER_ADDR leaves by, when found. */
public record NodeReport(String node, Map<Check, Cell> cells, Optional<String> socketInterface) {

    public NodeReport {
        EnumMap<Check, Cell> copy = new EnumMap<>(Check.class);
        copy.putAll(cells);
        for (Check c : Check.values()) {
            copy.putIfAbsent(c, Cell.skipped());
        }
        cells = Collections.unmodifiableMap(copy);
    }

    public boolean failed() {
        return cells.values().stream().anyMatch(c -> c.status() == Cell.Status.FAIL);
    }
}
