package org.runjob.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

import tools.jackson.databind.json.JsonMapper;

/**
 * A queued run's coordinator started again in the same run folder: the scheduler requeued its
 * batch job (preemption, a node failure with {@code --requeue}, {@code scontrol requeue}). The run
 * goes on as its next attempt, as {@code runjob resume} would: same run id, same folder, same
 * directory on every node; the earlier attempts' {@code summary.json} is kept as
 * {@code summary.until-attempt-N.json}. On the first start the folder holds no attempt: attempt 0.
 */
final class Requeued {

    private Requeued() {
    }

    /** The attempt the run starts with; said on stderr when it goes on from an earlier one. */
    static int firstAttempt(Io io, Path folder, String runId) throws IOException {
        Path status = folder.resolve("status.json");
        if (!Files.isRegularFile(status)) {
            return 0;
        }
        int last;
        try {
            last = JsonMapper.builder().build().readTree(Files.readString(status)).path("attempt").asInt(0);
        } catch (RuntimeException e) {
            last = 0;
        }
        int next = last + 1;
        Path summary = folder.resolve("summary.json");
        if (Files.isRegularFile(summary)) {
            Files.move(summary, folder.resolve("summary.until-attempt-" + last + ".json"), StandardCopyOption.REPLACE_EXISTING);
        }
        String restarts = io.env().get("SLURM_RESTART_COUNT");
        io.err().println("runjob: run " + runId + " started again by its scheduler" + (restarts == null ? "" : " (restart " + restarts + ")")
                + ": it goes on as attempt " + next);
        return next;
    }
}
