package org.runjob.run;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;

import org.runjob.node.BatchQueue;

/**
 * A queued run's coordinator started again in the same run folder: the scheduler requeued its
 * batch job (preemption, a node failure with {@code --requeue}, {@code scontrol requeue}). The run
 * goes on as its next attempt, as {@code runjob resume} would: same run id, same folder, same
 * directory on every node; the earlier attempts' {@code summary.json} is kept as
 * {@code summary.until-attempt-N.json}. On the first start the folder holds no attempt: attempt 0.
 */
public final class Requeued {

    private Requeued() {
    }

    /**
     * The attempt the run starts with; said on stderr when it goes on from an earlier one, with how
     * often {@code queue} restarted the job, where it says ({@link BatchQueue#restarts}).
     */
    static int firstAttempt(Io io, Path folder, String runId, Optional<BatchQueue> queue) throws IOException {
        OptionalInt next = RunStatus.nextAttempt(folder);
        if (next.isEmpty()) {
            return 0;
        }
        Optional<Integer> restarts = queue.flatMap(q -> q.restarts(io.env()));
        io.err().println("runjob: run " + runId + " started again by its scheduler" + restarts.map(r -> " (restart " + r + ")").orElse("")
                + ": it goes on as attempt " + next.getAsInt());
        return next.getAsInt();
    }
}
