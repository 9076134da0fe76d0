package org.runjob.cli;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.runjob.launch.NodeStarter;
import org.runjob.preflight.Preflight;
import org.runjob.spec.JobSpec;

/** Preflight as a command needs it: the job's files shipped for a run, nothing for {@code check}. */
final class Launch {

    private Launch() {
    }

    /**
     * @param runId the run's id for a run (its agents take the workdir's run lock, receive the files and lease the GPUs); empty for check
     */
    static Preflight.Outcome preflight(JobSpec spec, NodeStarter starter, Map<String, String> env,
                                       Optional<String> runId, Optional<java.time.Duration> waitForGpus, PrintStream progress) {
        List<JobSpec.ShippedFile> files = runId.isPresent() ? spec.files() : List.of();
        return new Preflight(spec, starter, env, runId, waitForGpus).run(files, progress::println);
    }
}
