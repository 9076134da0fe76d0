package org.runjob.launch;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

import org.runjob.plan.WorkerLaunch;

/** One worker as the {@link Supervisor} sees it during an attempt: mutable, and only on the supervisor's thread. */
final class SupervisedWorker {
    final WorkerLaunch launch;
    WorkerState state = WorkerState.STARTING;
    OptionalLong pid = OptionalLong.empty();
    Instant start;
    Instant end;
    Outcome outcome;
    /** When its program ended, in epoch ms by its node's clock; 0 when not known. */
    long programEnd;
    List<String> tail = List.of();
    Instant lastOutput;
    Optional<String> errorFile = Optional.empty();
    long[] bytes = new long[2];

    SupervisedWorker(WorkerLaunch launch) {
        this.launch = launch;
    }

    RankResult result() {
        return new RankResult(launch.rank(), launch.localRank(), launch.node(), pid, start, end, state,
                Optional.ofNullable(outcome), bytes[0], bytes[1], tail, errorFile);
    }
}
