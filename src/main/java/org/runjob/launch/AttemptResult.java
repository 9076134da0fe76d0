package org.runjob.launch;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * One attempt of a run: every rank's result, the root cause (the first failure by arrival time) when
 * it failed, and whether a Ctrl-C / SIGTERM ended it.
 */
public record AttemptResult(int attempt, Instant start, Instant end, List<RankResult> ranks,
                            Optional<RankResult> rootCause, boolean interrupted) {

    public AttemptResult {
        ranks = List.copyOf(ranks);
    }

    public boolean succeeded() {
        return !interrupted && ranks.stream().allMatch(r -> r.state() == WorkerState.SUCCEEDED);
    }
}
