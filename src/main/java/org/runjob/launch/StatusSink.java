package org.runjob.launch;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Where the supervisor reports a run's live state (the run folder's {@code status.json}): after
 * changes of workers' states and when the stop begins (a burst of changes at once, within 200 ms),
 * at most once a second for output alone, and at the end of every attempt.
 */
@FunctionalInterface
public interface StatusSink {

    /** One rank as it stands. */
    record Rank(int rank, String node, WorkerState state, Optional<Instant> lastOutput) {
    }

    /** @param stopping true once the attempt is being stopped (a failure, an interrupt) */
    void update(int attempt, boolean stopping, List<Rank> ranks);

    StatusSink NONE = (attempt, stopping, ranks) -> { };
}
