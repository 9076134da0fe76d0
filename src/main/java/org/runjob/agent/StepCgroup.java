package org.runjob.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

import org.runjob.runtime.Cgroup;

/** The cgroup of the Slurm step this agent runs in, which its workers' containers stay under. */
final class StepCgroup {

    private StepCgroup() {
    }

    /**
     * Slurm's cgroup plugins name a step's cgroup {@code .../job_ID/step_ID/...} (a heterogeneous
     * job's component by its own job id, not {@code SLURM_JOB_ID}'s).
     */
    private static final Pattern SLURM_STEP = Pattern.compile("/job_\\d+/step_[^/]+");

    /**
     * The step's cgroup when {@code env} is a Slurm step's ({@code SLURM_STEP_ID}) and this process
     * is in a step's cgroup; empty elsewhere, or when unreadable.
     */
    static Optional<Cgroup> of(Map<String, String> env) {
        if (!env.containsKey("SLURM_STEP_ID")) {
            return Optional.empty();
        }
        try {
            return Cgroup.of(Files.readAllLines(Path.of("/proc/self/cgroup")), SLURM_STEP);
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
