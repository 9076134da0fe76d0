package org.runjob.launch;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What became of one worker in one attempt. {@code outcome} is empty only for a worker that never
 * ended (none, once a run returns); {@code errorFile} is the JSON a failed worker left in its
 * TORCHELASTIC_ERROR_FILE (torch's {@code @record}), when it did.
 */
public record RankResult(int rank, int localRank, String node, OptionalLong pid, Instant start, Instant end,
                         WorkerState state, Optional<Outcome> outcome, long stdoutBytes, long stderrBytes,
                         List<String> stderrTail, Optional<String> errorFile) {

    public RankResult {
        stderrTail = List.copyOf(stderrTail);
    }

    public Duration duration() {
        return start == null || end == null ? Duration.ZERO : Duration.between(start, end);
    }
}
