package org.runjob.launch;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Where the supervisor reports a run's live state (the run folder's {@code status.json}): after
 * changes of workers' states and when the stop begins (a burst of changes at once, within 200 ms),
 * at most once a second for output alone, and at the end of every attempt.
 */
@FunctionalInterface
public interface StatusSink {

    /** One rank as it stands; {@code pid} is the worker's process id on its node, once it started. */
    record Rank(int rank, String node, WorkerState state, OptionalLong pid, Optional<Instant> lastOutput) {
    }

    /** @param stopping true once the attempt is being stopped (a failure, an interrupt) */
    void update(int attempt, boolean stopping, List<Rank> ranks);

    StatusSink NONE = (attempt, stopping, ranks) -> { };
}
